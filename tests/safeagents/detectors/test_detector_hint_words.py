"""One scan finds every registered hint word a text holds."""

from __future__ import annotations

from typing import ClassVar

from detector_testkit import write

from safeagents._detector import CallContext
from safeagents.detectors._hint_words import hints_in, register_hints
from safeagents.detectors._python import PythonCode, PythonDetector


def test_the_words_a_text_holds_and_only_those() -> None:
    register_hints(("zebra_hint", "yak.hint"))
    assert {"zebra_hint", "yak.hint"} <= hints_in("a zebra_hint and a yak.hint")
    found = hints_in("yakXhint zebra")
    assert "yak.hint" not in found  # a word, not a regex
    assert "zebra_hint" not in found


def test_words_registered_later_are_found_too() -> None:
    text = "call quokka_hint_late() here"
    assert "quokka_hint_late" not in hints_in(text)
    register_hints(("quokka_hint_late",))
    assert "quokka_hint_late" in hints_in(text)


class _Wombat(PythonDetector):
    name: ClassVar[str] = "wombat"
    hints: ClassVar[tuple[str, ...]] = ("wombat_marker",)

    def inspect(self, code: PythonCode, context: CallContext) -> bool:
        return True


def test_a_detector_without_its_hint_is_not_asked(context: CallContext) -> None:
    detector = _Wombat()
    assert detector.matches(write("x = 'wombat_marker'\n"), context)
    assert not detector.matches(write("x = 'wombat'\n"), context)
