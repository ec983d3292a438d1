"""Writes whose text a transcript cut short, and what survives of them."""

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors import _cut_text
from safeagents.detectors._cut_text import CutText

DETECTOR = CutText()


def test_exports() -> None:
    assert _cut_text.__all__ == ["CutText"]


def test_a_write_with_cut_text_matches(context: CallContext) -> None:
    cut = "    assert f(3) == 5...[truncated in source]"
    assert DETECTOR.matches(Effect("write", path="/w/test_a.py", content=cut), context)
    assert DETECTOR.matches(Effect("write", path="/w/a.py", removed="x", added=cut), context)


def test_whole_writes_and_other_effects_do_not(context: CallContext) -> None:
    assert not DETECTOR.matches(Effect("write", path="/w/a.py", content="x = 1\n"), context)
    cut = "cat a...[truncated in source]"
    assert not DETECTOR.matches(Effect("read", path="/w/a.py"), context)
    assert not DETECTOR.matches(Effect("exec", command=cut, opaque=True), context)
