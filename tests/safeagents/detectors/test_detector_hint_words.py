"""One scan finds every registered hint word a text holds."""

from __future__ import annotations

from typing import ClassVar

from detector_testkit import write

from safeagents._detector import CallContext
from safeagents.detectors._hint_words import folded, hints_in, register_hints
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


def test_words_registered_in_any_case_are_found_in_any_case() -> None:
    register_hints(("Narwhal_Hint",), any_case=True)
    assert folded("Narwhal_Hint") in hints_in("a NARWHAL_hint here")
    assert folded("Narwhal_Hint") not in hints_in("a narwhal hint here")
    assert "Narwhal_Hint" not in hints_in("a Narwhal_Hint here")  # only under its folded name


def test_answers_for_several_texts_in_turn_stay_right() -> None:
    register_hints(("ibex_hint",))
    texts = [f"text {number} " + ("ibex_hint" if number % 2 else "") for number in range(7)]
    for _ in range(2):
        for number, text in enumerate(texts):
            assert ("ibex_hint" in hints_in(text)) == bool(number % 2)


class _Wombat(PythonDetector):
    name: ClassVar[str] = "wombat"
    hints: ClassVar[tuple[str, ...]] = ("wombat_marker",)

    def inspect(self, code: PythonCode, context: CallContext) -> bool:
        return True


def test_a_detector_without_its_hint_is_not_asked(context: CallContext) -> None:
    detector = _Wombat()
    assert detector.matches(write("x = 'wombat_marker'\n"), context)
    assert not detector.matches(write("x = 'wombat'\n"), context)
