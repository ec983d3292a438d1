"""A patch's hunks read one by one when they do not parse as one text."""

from __future__ import annotations

from safeagents.detectors import _patch_hunks
from safeagents.detectors._patch_hunks import hunk_pieces

TWO_SCOPES = (
    "*** Begin Patch\n*** Update File: pkg/freq.py\n@@\n _DAY = 24\n+\n+_seen: dict = {}\n"
    "@@\n         elif kind == 'td':\n             index = to_td(index)\n         else:\n"
    "+            seen = _seen.get(key, 0)\n+            _seen[key] = seen + 1\n"
    "             index = Index(index)\n+            if seen:\n+                return 'alias'\n"
    " \n     if isinstance(index, Index):\n*** End Patch\n"
)
ADDED = (
    "\n_seen: dict = {}\n            seen = _seen.get(key, 0)\n            _seen[key] = seen + 1\n"
    "            if seen:\n                return 'alias'\n"
)


def test_exports() -> None:
    assert _patch_hunks.__all__ == ["hunk_pieces", "hunk_sides"]


def test_each_hunk_is_a_piece_of_its_own() -> None:
    pieces = hunk_pieces(ADDED, [TWO_SCOPES])
    assert pieces[0] == "_DAY = 24\n\n_seen: dict = {}"
    inner = pieces[1]
    assert inner.startswith("        if True:\n            pass\n        elif kind == 'td':")
    assert "            if seen:\n                return 'alias'" in inner
    assert "if isinstance(index, Index)" not in inner  # a header without its body is dropped


def test_a_clause_of_a_try_gets_a_try() -> None:
    patch = "@@\n     except KeyError:\n+        return 1\n@@\n x = 1\n+y = 2\n"
    pieces = hunk_pieces("        return 1\ny = 2\n", ["--- a/m.py\n+++ b/m.py\n" + patch])
    assert pieces[0] == "    try:\n        pass\n    except KeyError:\n        return 1"


def test_nothing_when_the_hunks_parse_together_or_no_patch_adds_the_lines() -> None:
    together = "@@\n def f():\n+    return 1\n@@\n def g():\n+    return 2\n"
    assert hunk_pieces("    return 1\n    return 2\n", [together]) == []
    assert hunk_pieces(ADDED, ["no patch here"]) == []
    assert hunk_pieces("", [TWO_SCOPES]) == []


def test_a_patch_that_parses_but_lacks_the_lines_lets_the_next_be_read() -> None:
    other = "@@\n def f():\n+    return 1\n"
    assert hunk_pieces(ADDED, [other, TWO_SCOPES]) == hunk_pieces(ADDED, [TWO_SCOPES])
    assert len(hunk_pieces(ADDED, [other, TWO_SCOPES])) == 2


def test_carriage_returns_split_lines_as_they_do_for_the_parser() -> None:
    crlf = TWO_SCOPES.replace("\n", "\r\n")
    assert hunk_pieces(ADDED, [crlf]) == hunk_pieces(ADDED, [TWO_SCOPES])
    assert hunk_pieces("    return 1\r\n", ["@@\r\n def f():\r\n+    return 1\r\n"]) == []


def test_hunk_sides_of_the_section_that_adds_the_lines() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n@@\n x = 1\n+y = 2\n"
        "*** Update File: b.py\n@@\n def f():\n-    return 1\n+    return 2\n\n*** End Patch"
    )
    assert _patch_hunks.hunk_sides(patch, "    return 2") == [
        (["def f():", "    return 1"], ["def f():", "    return 2"])
    ]
    assert _patch_hunks.hunk_sides(patch, "y = 2") == [(["x = 1"], ["x = 1", "y = 2"])]
    assert _patch_hunks.hunk_sides(patch, "z = 3") == []
