"""Effects of file edits: apply_patch envelopes, unified diffs and find/replace edits."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Literal

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis._diffs import MAX_PATCH_CHARS, parse_unified_diff

__all__ = ["edit_effect", "parse_patch", "write_effect"]

_EDIT_DIFF_CELLS = 1_000_000
"""Above this many old*new line pairs an edit is diffed by common prefix/suffix only."""

_HEREDOC_OPENER = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_SYMBOL_MARKERS = (
    "*** Replace Symbol Body:",
    "*** Insert Before Symbol:",
    "*** Insert After Symbol:",
)
_FILE_MARKERS = ("*** Add File:", "*** Delete File:", "*** Update File:", *_SYMBOL_MARKERS)


def write_effect(
    path: str, content: str, ctx: AnalysisContext, *, new_file: bool = False
) -> Effect:
    """A whole-file write: the new content is all added, what it replaces is unknown."""
    return Effect(
        "write",
        path=ctx.resolve(path),
        content=content,
        added=content,
        removed=None,
        new_file=new_file,
    )


def edit_effect(
    path: str,
    old: str,
    new: str,
    ctx: AnalysisContext,
    *,
    replace_all: bool = False,
) -> Effect:
    """A find/replace edit of ``path``; ``added``/``removed`` hold the changed lines.

    ``replace_all`` changes how often the edit applies, not which lines change, so it
    does not alter the effect. An empty ``old`` creates or overwrites the file.
    """
    del replace_all
    if old == "":
        return write_effect(path, new, ctx)
    removed, added = _changed_lines(old.split("\n"), new.split("\n"))
    return Effect(
        "write",
        path=ctx.resolve(path),
        content=None,
        added="\n".join(added),
        removed="\n".join(removed),
        new_file=False,
    )


def parse_patch(text: str, ctx: AnalysisContext) -> list[Effect]:
    """Effects of an apply_patch envelope or a unified diff; ``[]`` if ``text`` has neither."""
    if not isinstance(text, str):
        return []
    lines = text[:MAX_PATCH_CHARS].splitlines()
    if any(_is_envelope_marker(line.strip()) for line in lines):
        return _parse_envelope(lines, ctx)
    return parse_unified_diff(lines, ctx)


def _changed_lines(old: list[str], new: list[str]) -> tuple[list[str], list[str]]:
    """Lines of ``old`` deleted or replaced, and lines of ``new`` inserted or replacing."""
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(old), len(new)) - prefix
        and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]
    ):
        suffix += 1
    old_middle = old[prefix : len(old) - suffix]
    new_middle = new[prefix : len(new) - suffix]
    if len(old_middle) * len(new_middle) > _EDIT_DIFF_CELLS:
        return old_middle, new_middle
    removed: list[str] = []
    added: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_middle, new_middle, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            removed.extend(old_middle[old_start:old_end])
        if tag in ("insert", "replace"):
            added.extend(new_middle[new_start:new_end])
    return removed, added


def _is_envelope_marker(stripped: str) -> bool:
    return stripped.startswith("*** Begin Patch") or stripped.startswith(_FILE_MARKERS)


@dataclass
class _EnvelopeFile:
    """One ``*** Add File`` or ``*** Update File`` section being read."""

    operation: Literal["add", "update"]
    path: str
    dest: str | None = None
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def _parse_envelope(lines: list[str], ctx: AnalysisContext) -> list[Effect]:
    effects: list[Effect] = []
    current: _EnvelopeFile | None = None
    heredoc_delimiter: str | None = None

    def finish() -> None:
        nonlocal current
        if current is not None:
            effects.extend(_envelope_file_effects(current, ctx))
        current = None

    for line in lines:
        head = line[:1]
        if current is not None and (head == "+" or head == "-"):
            if head == "+":
                current.added.append(line[1:])
            elif current.operation == "update":
                current.removed.append(line[1:])
            continue
        stripped = line.strip()
        if stripped.startswith("*** "):
            if stripped.startswith("*** Move to:"):
                if current is not None and current.operation == "update":
                    current.dest = _marker_value(stripped) or None
                continue
            if stripped.startswith(("*** End Patch", "*** Begin Patch")):
                finish()
                continue
            if stripped.startswith(_FILE_MARKERS):
                finish()
                current = _open_section(stripped, effects, ctx)
                continue
        if (
            heredoc_delimiter is not None
            and stripped == heredoc_delimiter
            and not line.startswith((" ", "+", "-"))
        ):
            finish()
            heredoc_delimiter = None
            continue
        if current is None:
            opener = _HEREDOC_OPENER.search(line)
            if opener is not None:
                heredoc_delimiter = opener.group(2)
            continue
    finish()
    return effects


def _open_section(
    stripped: str, effects: list[Effect], ctx: AnalysisContext
) -> _EnvelopeFile | None:
    """Start the section a file marker opens; a delete is complete at once."""
    path = _marker_value(stripped)
    if stripped.startswith(_SYMBOL_MARKERS):
        path = path.split("::", 1)[0].strip()
    if not path:
        return None
    if stripped.startswith("*** Delete File:"):
        effects.append(Effect("delete", path=ctx.resolve(path)))
        return None
    if stripped.startswith("*** Add File:"):
        return _EnvelopeFile("add", path)
    return _EnvelopeFile("update", path)


def _marker_value(stripped: str) -> str:
    return stripped.split(":", 1)[1].strip()


def _envelope_file_effects(section: _EnvelopeFile, ctx: AnalysisContext) -> list[Effect]:
    path = ctx.resolve(section.path)
    added = "\n".join(section.added)
    if section.operation == "add":
        return [Effect("write", path=path, content=added, added=added, removed="", new_file=True)]
    removed = "\n".join(section.removed)
    if section.dest is None:
        return [Effect("write", path=path, content=None, added=added, removed=removed)]
    dest = ctx.resolve(section.dest)
    effects = [Effect("move", path=path, dest=dest)]
    effects.append(Effect("write", path=dest, content=None, added=added, removed=removed))
    return effects
