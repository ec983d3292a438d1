"""An edit's new lines read inside the file they land in, as far as the session shows it.

An edit tool's new text is a fragment (``if d.year == 2021 …: return 1``) whose function,
parameters and locals (``d = dt.date.fromisoformat(s)``) stand in the file around it. When
the session showed that file (a read of it, or a whole write) and every later edit of it
applies, the file after this edit is that text with the edits replayed and this one applied.
A patch (``apply_patch``, a unified diff) is such an edit too: its effect's removed lines are
replaced by its added ones, so a module constant an earlier patch of the session added
stands in the module. An output that shows more than the file (a tool's ``Exit code: 0``
header, a second file ``cat`` after it) is cut to the lines around the edit that parse.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator

from safeagents._detector import CallContext
from safeagents.detectors._history import current_content
from safeagents.detectors._patch_hunks import Sides, hunk_sides
from safeagents.detectors._python import PythonCode, argument_strings, parse

__all__ = ["edited_module", "patched_file"]

_MIN_OLD_TEXT = 8
"""Shortest text an edit replaces that is looked for in the file (shorter ones are ambiguous)."""
_MAX_CUTS = 6
"""Lines outside the edit that a syntax error points at, cut one run at a time."""
_MAX_CUT_CHARS = 400_000
"""Longest text cut to what parses (each cut parses it again)."""


def edited_module(code: PythonCode, context: CallContext) -> tuple[ast.Module, range] | None:
    """The module ``code`` (an edit tool's new text, or a patch's) makes of its file, and the
    lines of the module that are the new text; ``None`` when the session does not show the
    file."""
    if code.path is None:
        return None
    for old, new in _replacements(code, context):
        before = current_content(code.path, old, context)
        if before is None or before.count(old) != 1:
            continue
        start = before.index(old)
        first = before.count("\n", 0, start) + 1 + new[: max(new.find(code.source), 0)].count("\n")
        text = before[:start] + new + before[start + len(old) :]
        found = _parsed(text, range(first, first + code.source.count("\n") + 1))
        if found is not None:
            return found
    return None


def patched_file(path: str, added: str, context: CallContext) -> tuple[str, str] | None:
    """The text of ``path`` before and after the call's patch (``apply_patch``, a unified
    diff) that adds ``added``, each hunk put where its old side (context and removed lines)
    next stands in the file as the session shows it; ``None`` when a hunk does not apply."""
    for patch in argument_strings(context.call.arguments):
        hunks = hunk_sides(patch, added) if "\n+" in patch else []
        if not hunks:
            continue
        before = current_content(path, "\n".join(hunks[0][0]), context)
        after = None if before is None else _applied(before, hunks)
        return None if before is None or after is None else (before, after)
    return None


def _applied(text: str, hunks: Sides) -> str | None:
    rows = text.split("\n")
    at = 0
    for old, new in hunks:
        index = _found(rows, [row.rstrip() for row in old], at)
        if index is None:
            return None
        rows[index : index + len(old)] = new
        at = index + len(new)
    return "\n".join(rows)


def _found(rows: list[str], old: list[str], start: int) -> int | None:
    """Where the lines ``old`` (stripped at the right) next stand in ``rows`` from ``start``."""
    if not old:
        return None
    for index in range(start, len(rows) - len(old) + 1):
        width = index + len(old)
        if rows[index].rstrip() == old[0] and [row.rstrip() for row in rows[index:width]] == old:
            return index
    return None


def _replacements(code: PythonCode, context: CallContext) -> Iterator[tuple[str, str]]:
    """The text this call replaces in the file and the new text: an edit's old text by its
    whole new text (``code`` is what it adds, the lines both share cut off), then an edit
    tool's argument by ``code``, then each write effect's removed lines by its added ones."""
    assert code.path is not None
    for old, new in _edit_pairs(context.call.arguments, _ARGUMENT_DEPTH):
        if new != code.source and code.source in new and len(old) >= _MIN_OLD_TEXT:
            yield old, new
    for old in argument_strings(context.call.arguments):
        if old == code.source or len(old) < _MIN_OLD_TEXT or code.path.endswith(old):
            continue  # not the replaced text: too short to place, or the file's path
        yield old, code.source
    for effect in context.effects:
        removed, added = effect.removed, effect.added
        if effect.kind != "write" or effect.path != code.path or added is None:
            continue
        if removed is not None and len(removed) >= _MIN_OLD_TEXT:
            yield removed, added


_ARGUMENT_DEPTH = 3


def _edit_pairs(value: object, depth: int) -> Iterator[tuple[str, str]]:
    """An edit's old and new text: the strings of a mapping's ``old…`` and ``new…`` keys
    (``old_string``/``new_string``, ``oldText``/``newText``, ``old_str``/``new_str``), as
    deep as pi's and MultiEdit's lists of edits."""
    if depth <= 0:
        return
    if isinstance(value, dict):
        olds = [v for k, v in value.items() if str(k).lower().startswith("old")]
        news = [v for k, v in value.items() if str(k).lower().startswith("new")]
        if len(olds) == 1 == len(news) and isinstance(olds[0], str) and isinstance(news[0], str):
            yield olds[0], news[0]
        for item in value.values():
            yield from _edit_pairs(item, depth - 1)
    elif isinstance(value, list):
        for item in value:
            yield from _edit_pairs(item, depth - 1)


def _parsed(text: str, lines: range) -> tuple[ast.Module, range] | None:
    """``text`` parsed, or the run of its lines around ``lines`` that parses once cut: at its
    first line while a syntax error points there (an output's header), and after ``lines``
    where one points past them (what the output shows after the file); ``lines`` moved along."""
    tree = parse(text)
    if tree is not None:
        return tree, lines
    if len(text) > _MAX_CUT_CHARS:
        return None
    rows = text.split("\n")
    start, end = 0, len(rows)
    for _ in range(_MAX_CUTS):
        error = _error_line(rows[start:end])
        if error is None:
            tree = parse("\n".join(rows[start:end]))
            return None if tree is None else (tree, range(lines[0] - start, lines[-1] + 1 - start))
        row = start + error - 1
        if error == 1 and row < lines[0] - 1:
            start = row + 1
        elif error > 0 and row > lines[-1] - 1:
            end = min(row, end - 1)
        else:
            return None
    return None


def _error_line(rows: list[str]) -> int | None:
    """The line a syntax error of ``rows`` (dedented) is reported on (0: another error);
    ``None`` when they parse."""
    try:
        ast.parse(textwrap.dedent("\n".join(rows)))
    except SyntaxError as error:
        return error.lineno or 1
    except (ValueError, RecursionError, MemoryError, OverflowError):
        return 0
    return None
