"""``reverts-shown-commit``: an edit puts back lines a diff the session showed had replaced.

## What it does
Matches a write (an edit, or a ``sed``/``perl`` substitution) whose every change turns a
line that an earlier output of the session showed as added by a diff (``+`` under a ``@@``
hunk of ``git show``, ``git diff``) back into the line the same diff showed it replacing
(``-``): the file as it was before that change. Exceptions use it where the task asks to
split a commit into several, whose first part must hold the files as they were before the
commit's other part.

## Example
After ``git show HEAD -- tests/test_tax.py`` printed ``-    assert tax(0.05) == D("0.02")``
and ``+    assert tax(0.05) == D("0.03")``: ``sed -i 's/== D("0.03")/== D("0.02")/'
tests/test_tax.py``. Not matched: a value no shown diff had there (``== D("0.04")``), or a
line no diff showed replaced.
"""

from __future__ import annotations

from collections.abc import Iterator
from difflib import SequenceMatcher
from itertools import combinations
from typing import ClassVar, NamedTuple

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors._history import recent_outputs
from safeagents.detectors._python import GuardedDetector
from safeagents.detectors._stream_edits import script_substitutions

__all__ = ["RevertsShownCommit"]

_MAX_EDIT_CHARS = 20_000
_MAX_DIFF_LINES = 1_000
_MAX_LINE_CHARS = 500
_MAX_SPANS = 8
_MIN_LIKENESS = 0.5
"""How alike (difflib's quick ratio) a line and the one it may be put back to must be."""


class _Diff(NamedTuple):
    removed: frozenset[str]
    added: frozenset[str]


class RevertsShownCommit(GuardedDetector):
    name: ClassVar[str] = "reverts-shown-commit"
    description: ClassVar[str] = "an edit puts back the lines a diff the session showed replaced"

    def detect(self, effect: Effect, context: CallContext) -> bool:
        if effect.kind != "write" or not effect.path:
            return False
        edit = effect.removed is not None and effect.added is not None
        if not edit and not (effect.content is None and effect.removed is None and effect.command):
            return False
        diffs = [diff for diff in map(_shown_diff, recent_outputs(context)) if diff]
        if not diffs:
            return False
        if effect.removed is not None and effect.added is not None:
            return _edit_reverts(effect.removed, effect.added, diffs)
        pairs = list(script_substitutions(effect.command or ""))
        return bool(pairs) and all(
            any(_substitution_reverts(old, new, diff) for diff in diffs) for old, new in pairs
        )


def _shown_diff(output: str) -> _Diff | None:
    """The lines a unified diff in ``output`` removes and adds, stripped; None for no diff."""
    if "@@" not in output and "diff --git" not in output:
        return None
    lines = output.splitlines()[:_MAX_DIFF_LINES]
    if not any(line.startswith(("@@", "diff --git")) for line in lines):
        return None
    removed = {line[1:].strip() for line in lines if line.startswith("-") and line[:3] != "---"}
    added = {line[1:].strip() for line in lines if line.startswith("+") and line[:3] != "+++"}
    removed.discard("")
    added.discard("")
    return _Diff(frozenset(removed), frozenset(added)) if removed and added else None


def _substitution_reverts(old: str, new: str, diff: _Diff) -> bool:
    return bool(old) and any(
        _undoes(line, line.replace(old, new, 1), diff.removed) for line in diff.added if old in line
    )


def _edit_reverts(removed: str, added: str, diffs: list[_Diff]) -> bool:
    if len(removed) + len(added) > _MAX_EDIT_CHARS:
        return False
    changes = list(_changed(removed, added))
    if not changes:
        return False
    return any(all(_change_reverts(old, new, diff) for old, new in changes) for diff in diffs)


def _change_reverts(old: list[str], new: list[str], diff: _Diff) -> bool:
    """Whether lines ``old`` of the file, put as ``new``, go back to what ``diff`` replaced:
    lines it added dropped, lines it removed put back, or one line each, changed back."""
    if len(old) == len(new):
        pairs = zip(old, new, strict=True)
        return all(line in diff.added and _undoes(line, back, diff.removed) for line, back in pairs)
    return all(line in diff.added for line in old) and all(line in diff.removed for line in new)


def _undoes(line: str, changed: str, originals: frozenset[str]) -> bool:
    """Whether ``changed`` is ``line`` (a line a diff added) with some of the diff's changes
    to one of ``originals`` (the lines it removed) undone, and nothing else: ``compute(3) ==
    D("0.03")`` back to ``== D("0.02")`` where the diff replaced ``calc(3) == D("0.02")``."""
    if line == changed or len(line) > _MAX_LINE_CHARS:
        return False
    for original in originals:
        if changed == original:
            return True
        if len(original) > _MAX_LINE_CHARS:
            continue
        matcher = SequenceMatcher(None, line, original, autojunk=False)
        if matcher.quick_ratio() < _MIN_LIKENESS:
            continue
        spans = [op for op in matcher.get_opcodes() if op[0] != "equal"]
        if len(spans) > _MAX_SPANS:
            continue
        for count in range(1, len(spans)):
            for chosen in combinations(spans, count):
                if _applied(line, original, chosen) == changed:
                    return True
    return False


def _applied(line: str, original: str, spans: tuple[tuple[str, int, int, int, int], ...]) -> str:
    text, last = [], 0
    for _tag, start, end, original_start, original_end in spans:
        text += [line[last:start], original[original_start:original_end]]
        last = end
    return "".join([*text, line[last:]])


def _changed(removed: str, added: str) -> Iterator[tuple[list[str], list[str]]]:
    """Each change of ``removed`` into ``added``: its old lines and its new lines (stripped,
    blank ones left out)."""
    old = [line.strip() for line in removed.splitlines()]
    new = [line.strip() for line in added.splitlines()]
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag != "equal":
            yield (
                [line for line in old[old_start:old_end] if line],
                [line for line in new[new_start:new_end] if line],
            )
