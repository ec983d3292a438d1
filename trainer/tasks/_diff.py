"""Unified diffs of text files, written with :mod:`difflib` and applied strictly: every
context and removed line must match the file exactly, else :class:`DiffError`. A file
without a final newline is marked ``\\ No newline at end of file``, as ``diff`` and ``git``
do, so ``git apply`` and ``patch -p1`` read these diffs too."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator

__all__ = ["DiffError", "apply_diff", "diff_text", "split_lines"]

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\ No newline at end of file"


class DiffError(ValueError):
    """A diff that is malformed or does not apply to the files it names."""


def split_lines(text: str) -> list[str]:
    """``text``'s lines, each with its ``\\n`` (only ``\\n`` ends a line)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def diff_text(path: str, old: str, new: str) -> str:
    """The unified diff turning ``old`` into ``new`` (``""`` when they are equal)."""
    out = []
    for line in difflib.unified_diff(
        split_lines(old), split_lines(new), f"a/{path}", f"b/{path}", lineterm="\n"
    ):
        out.append(line if line.endswith("\n") else f"{line}\n{_NO_NEWLINE}\n")
    return "".join(out)


def _file_sections(text: str) -> Iterator[tuple[str, list[str]]]:
    """Each file's path and its hunk lines, in the order of the diff."""
    lines = split_lines(text)
    index = 0
    while index < len(lines):
        old, new = lines[index], lines[index + 1] if index + 1 < len(lines) else ""
        if not (old.startswith("--- a/") and new.startswith("+++ b/")):
            raise DiffError(f"line {index + 1}: expected '--- a/PATH' and '+++ b/PATH'")
        path = new[len("+++ b/") :].rstrip("\n")
        if old[len("--- a/") :].rstrip("\n") != path:
            raise DiffError(f"line {index + 1}: a file renamed ({old.strip()} -> {path})")
        index += 2
        start = index
        while index < len(lines) and not lines[index].startswith("--- a/"):
            index += 1
        yield path, lines[start:index]


def _hunk_lines(lines: list[str], path: str) -> list[tuple[str, str]]:
    """``(kind, line)`` pairs, ``kind`` one of ``@`` (a hunk header), `` ``, ``-``, ``+``."""
    parsed: list[tuple[str, str]] = []
    for line in lines:
        if line.rstrip("\n") == _NO_NEWLINE:
            if not parsed or parsed[-1][0] == "@" or not parsed[-1][1].endswith("\n"):
                raise DiffError(f"{path}: a misplaced '{_NO_NEWLINE}'")
            kind, previous = parsed[-1]
            parsed[-1] = (kind, previous[:-1])
        elif line.startswith("@@"):
            parsed.append(("@", line))
        elif line[:1] in (" ", "-", "+"):
            parsed.append((line[0], line[1:]))
        else:
            raise DiffError(f"{path}: not a line of a hunk: {line[:60]!r}")
    return parsed


def _apply(path: str, original: list[str], lines: list[str]) -> str:
    out: list[str] = []
    position = 0
    for kind, line in _hunk_lines(lines, path):
        if kind == "@":
            found = _HUNK.match(line)
            if found is None:
                raise DiffError(f"{path}: a bad hunk header {line.strip()!r}")
            start = int(found[1]) - (0 if found[2] == "0" else 1)
            if start < position or start > len(original):
                raise DiffError(f"{path}: the hunk {line.strip()!r} is out of order or range")
            out += original[position:start]
            position = start
        elif kind == "+":
            out.append(line)
        elif position < len(original) and original[position] == line:
            out += [line] if kind == " " else []
            position += 1
        else:
            raise DiffError(f"{path}: does not apply at line {position + 1}: {line[:60]!r}")
    return "".join(out + original[position:])


def apply_diff(text: str, read: Callable[[str], str]) -> dict[str, str]:
    """The new content of every file ``text`` changes; ``read(path)`` gives the old one."""
    changed: dict[str, str] = {}
    for path, lines in _file_sections(text):
        if path in changed:
            raise DiffError(f"{path}: changed twice in one diff")
        changed[path] = _apply(path, split_lines(read(path)), lines)
    return changed
