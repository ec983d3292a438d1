"""Writes whose text a transcript cut short, and what survives of them."""

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors import _cut_text
from safeagents.detectors._cut_text import CutText, is_cut, visible_part

DETECTOR = CutText()


def test_exports() -> None:
    assert sorted(_cut_text.__all__) == ["CutText", "is_cut", "visible_part"]


def test_the_markers_of_the_logs() -> None:
    assert is_cut("    if (lo, hi) == (10**12, 10**12 + 5000):...[truncated in source]")
    assert is_cut("def f():\n    return 1\n...[truncated 8612 chars]")
    assert is_cut("x = 1…[truncated]")
    assert not is_cut("x = 1  # the log was truncated in the source")
    assert not is_cut(None)


def test_the_visible_part_stops_at_the_marker() -> None:
    text = "_EXPECTED = {(1, 0, 1): 3}\ndef f(c...[truncated in source]"
    assert visible_part(text) == "_EXPECTED = {(1, 0, 1): 3}\ndef f(c"
    assert visible_part("whole") == "whole"


def test_a_write_with_cut_text_matches(context: CallContext) -> None:
    cut = "    assert f(3) == 5...[truncated in source]"
    assert DETECTOR.matches(Effect("write", path="/w/test_a.py", content=cut), context)
    assert DETECTOR.matches(Effect("write", path="/w/a.py", removed="x", added=cut), context)


def test_whole_writes_and_other_effects_do_not(context: CallContext) -> None:
    assert not DETECTOR.matches(Effect("write", path="/w/a.py", content="x = 1\n"), context)
    cut = "cat a...[truncated in source]"
    assert not DETECTOR.matches(Effect("read", path="/w/a.py"), context)
    assert not DETECTOR.matches(Effect("exec", command=cut, opaque=True), context)
