"""Unified diffs (``diff -u``, ``git diff``) to effects, tolerant of prose around them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from safeagents._actions import AnalysisContext, Effect

__all__ = ["MAX_PATCH_CHARS", "parse_unified_diff"]

MAX_PATCH_CHARS = 2_000_000
"""Patch text beyond this many characters is ignored."""

_NULL_PATH = "/dev/null"
_HUNK_HEADER = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


@dataclass
class _DiffFile:
    """What the headers and hunks of one file in a diff say."""

    old_path: str | None = None
    new_path: str | None = None
    git_header: bool = False
    created: bool = False
    deleted: bool = False
    renamed: bool = False
    changed: bool = False
    binary: bool = False
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def parse_unified_diff(lines: list[str], ctx: AnalysisContext) -> list[Effect]:
    """Effects of every file a unified diff in ``lines`` touches."""
    effects: list[Effect] = []
    current: _DiffFile | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("diff --git "):
            _finish(current, effects, ctx)
            current = _DiffFile(git_header=True)
            current.old_path, current.new_path = _git_header_paths(line[len("diff --git ") :])
        elif _is_file_header_pair(lines, index):
            if current is None or current.changed or not current.git_header:
                _finish(current, effects, ctx)
                current = _DiffFile()
            current.old_path = _header_path(lines[index][4:])
            current.new_path = _header_path(lines[index + 1][4:])
            index += 1
        elif current is not None and line.startswith("@@"):
            index = _read_hunk(lines, index, current)
            continue
        elif current is not None:
            _read_extended_header(line, current)
        index += 1
    _finish(current, effects, ctx)
    return effects


def _is_file_header_pair(lines: list[str], index: int) -> bool:
    return (
        lines[index].startswith("--- ")
        and index + 1 < len(lines)
        and lines[index + 1].startswith("+++ ")
    )


def _read_extended_header(line: str, current: _DiffFile) -> None:
    """Apply git's extended header lines (``new file mode``, ``rename to`` …)."""
    if line.startswith("new file mode"):
        current.created = True
    elif line.startswith("deleted file mode"):
        current.deleted = True
    elif line.startswith("rename from "):
        current.old_path = _unquote(line[len("rename from ") :])
        current.renamed = True
    elif line.startswith("rename to "):
        current.new_path = _unquote(line[len("rename to ") :])
        current.renamed = True
    elif line.startswith("Binary files ") or line.startswith("GIT binary patch"):
        current.changed = True
        current.binary = True


def _read_hunk(lines: list[str], index: int, current: _DiffFile) -> int:
    """Consume the hunk whose header is at ``index``; return the index after it.

    With line counts in the header exactly that many lines are read; a bare ``@@``
    (common in model-written diffs) reads diff-shaped lines until something else.
    """
    header = _HUNK_HEADER.match(lines[index])
    counted = header is not None
    old_left = int(header.group(1) or 1) if header else 0
    new_left = int(header.group(2) or 1) if header else 0
    current.changed = True
    index += 1
    while index < len(lines):
        if counted and old_left <= 0 and new_left <= 0:
            break
        line = lines[index]
        if not counted and (line.startswith("diff --git ") or _is_file_header_pair(lines, index)):
            break
        if line.startswith("+"):
            current.added.append(line[1:])
            new_left -= 1
        elif line.startswith("-"):
            current.removed.append(line[1:])
            old_left -= 1
        elif line.startswith(" ") or line == "":
            old_left -= 1
            new_left -= 1
        elif not line.startswith("\\"):
            break
        index += 1
    return index


def _finish(current: _DiffFile | None, effects: list[Effect], ctx: AnalysisContext) -> None:
    if current is None:
        return
    old_path = current.old_path if current.old_path != _NULL_PATH else None
    new_path = current.new_path if current.new_path != _NULL_PATH else None
    added = None if current.binary else "\n".join(current.added)
    removed = None if current.binary else "\n".join(current.removed)
    if (current.deleted or new_path is None) and old_path:
        effects.append(Effect("delete", path=ctx.resolve(old_path)))
        return
    if not new_path:
        return
    target = ctx.resolve(new_path)
    if current.created or old_path is None:
        effects.append(
            Effect("write", path=target, content=added, added=added, removed="", new_file=True)
        )
        return
    source = ctx.resolve(old_path)
    if source != target and (current.renamed or current.git_header):
        effects.append(Effect("move", path=source, dest=target))
    if current.changed:
        effects.append(Effect("write", path=target, content=None, added=added, removed=removed))


def _git_header_paths(rest: str) -> tuple[str | None, str | None]:
    """Split ``a/x b/y`` from a ``diff --git`` line; paths may contain spaces."""
    rest = rest.strip()
    if rest.startswith('"'):
        parts = re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', rest)
        names = [quoted or bare for quoted, bare in parts]
        if len(names) == 2:
            return _strip_prefix(names[0], "a/"), _strip_prefix(names[1], "b/")
        return None, None
    candidates = [match.start() for match in re.finditer(r" b/", rest)]
    if not candidates:
        return None, None
    split = candidates[0]
    for position in candidates:
        if rest[2:position] == rest[position + 3 :]:
            split = position
            break
    return _strip_prefix(rest[:split], "a/"), _strip_prefix(rest[split + 1 :], "b/")


def _header_path(raw: str) -> str:
    """The path of a ``---``/``+++`` line, without timestamp or ``a/``/``b/`` prefix."""
    path = _unquote(raw.split("\t", 1)[0].strip())
    if path == _NULL_PATH:
        return path
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix) :] if path.startswith(prefix) else path


def _unquote(path: str) -> str:
    path = path.strip()
    if len(path) >= 2 and path.startswith('"') and path.endswith('"'):
        return path[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return path
