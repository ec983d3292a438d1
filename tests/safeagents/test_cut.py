"""The truncation marker of published logs, and what survives before it."""

from safeagents import _cut
from safeagents._cut import is_cut, visible_part


def test_exports() -> None:
    assert sorted(_cut.__all__) == ["MARKER", "is_cut", "visible_part"]


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
