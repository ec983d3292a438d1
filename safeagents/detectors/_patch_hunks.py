"""The hunks of a patch read one by one, when the file section they make up does not parse.

A patch (``apply_patch``'s ``*** Update File:``, a unified diff) may change a module in two
places: a counter added at module level and a branch on it inside a function. Its hunks'
new sides, run together, are no Python, and the pieces that start unindented
(:func:`~safeagents.detectors._python.top_level_blocks`) leave out the function's part.
Here each hunk's new side is cut where it leaves the block it starts in (a line indented
less than its first), a piece that starts with a clause of a statement the hunk does not
show (``elif x:``, ``else:``, ``except E:``) gets a header it can hang from, and a piece
that ends with a header whose body the hunk does not show loses that line: what parses is
a fragment of the module to read as the edit does.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable, Iterable, Iterator

__all__ = ["hunk_pieces", "hunk_sides"]

_HEADER_LINE = re.compile(
    r"^(?:\*\*\* (?:Update|Add|Delete) File:|diff --git |\+\+\+ |--- "
    r"|@@|\*\*\* End of File|index |\\ No newline).*\n?",
    re.MULTILINE,
)
"""A file's or a hunk's header line: where one hunk ends and the next begins."""
_NEW_SIDE_LINE = re.compile(r"^(?: |\+(?!\+\+ )|(?=$))(.*)$", re.MULTILINE)
_FILE_HEADER = re.compile(r"^(?:\*\*\* (?:Update|Add|Delete) File:|diff --git |--- )")
_ODD_BREAK = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
"""Line breaks of ``str.splitlines`` that ``$`` does not know."""
_CLAUSE = re.compile(r"^(elif\b|else\s*:|except\b|finally\s*:)")
_MAX_TRAILING = 3
"""Lines dropped, one by one, from the end of a piece that does not parse."""
_MAX_PIECES = 16


def hunk_pieces(
    added: str, patches: Iterable[str], parses: Callable[[str], bool] | None = None
) -> list[str]:
    """Pieces of the hunks of the first of ``patches`` that adds every line of ``added``,
    when their new sides run together do not parse (``parses``: a cached parser's answer,
    else a fresh parse; the caller parses the pieces again): each piece that parses and
    holds an added line."""
    parses = parses or _parses
    candidates = [patch for patch in patches if "\n+" in patch]
    lines: set[str] | None = None
    for index, candidate in enumerate(candidates):
        whole = parses(_new_sides(candidate))
        if whole and index == len(candidates) - 1:
            return []  # one text after all, read whole elsewhere, or not the patch of ``added``
        hunks = list(_hunks(candidate))
        if lines is None:
            lines = {line for line in added.splitlines() if line.strip()}
        if not lines.issubset({line for _, new in hunks for line in new}):
            continue
        if whole:
            return []
        pieces = [
            piece
            for hunk, new in hunks
            if lines & new
            for piece in _pieces(hunk, parses)
            if not lines.isdisjoint(piece.splitlines())
        ]
        return pieces[:_MAX_PIECES]
    return []


def _new_sides(patch: str) -> str:
    """The new sides of ``patch``'s hunks run together (what :func:`_hunks` yields, joined)."""
    if _ODD_BREAK.search(patch):
        return "\n".join(line for hunk, _ in _hunks(patch) for line in hunk)
    return "\n".join(_NEW_SIDE_LINE.findall(patch))


def _hunks(patch: str) -> Iterator[tuple[list[str], set[str]]]:
    """Each hunk's new side (added and context lines) and the lines it adds."""
    for chunk in _HEADER_LINE.split(patch):
        lines = chunk.splitlines()
        yield (
            [line[1:] for line in lines if line[:1] in " +"],
            {line[1:] for line in lines if line[:1] == "+"},
        )


def _pieces(hunk: list[str], parses: Callable[[str], bool]) -> Iterator[str]:
    """The parts of ``hunk`` that stay in the block their first line is in, made to parse."""
    piece: list[str] = []
    indent: int | None = None
    for line in hunk:
        if line.strip() and not line.lstrip().startswith("#"):
            depth = len(line) - len(line.lstrip())
            if indent is None:
                indent = depth
            elif depth < indent:
                yield from _parsed(piece, parses)
                piece, indent = [], depth
        piece.append(line)
    yield from _parsed(piece, parses)


def _parsed(piece: list[str], parses: Callable[[str], bool]) -> Iterator[str]:
    code = [line for line in piece if line.strip()]
    if not code:
        return
    first = next((line for line in code if not line.lstrip().startswith("#")), code[0])
    margin = first[: len(first) - len(first.lstrip())]
    clause = _CLAUSE.match(first.lstrip())
    if clause and clause[1].startswith(("elif", "else")):
        piece = [f"{margin}if True:", f"{margin}    pass", *piece]
    elif clause:
        piece = [f"{margin}try:", f"{margin}    pass", *piece]
    for _ in range(_MAX_TRAILING + 1):
        text = "\n".join(piece)
        if parses(text):
            yield text
            return
        while piece and not piece[-1].strip():
            piece = piece[:-1]
        if not piece:
            return
        piece = piece[:-1]


def _parses(text: str) -> bool:
    try:
        ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


Sides = list[tuple[list[str], list[str]]]


def hunk_sides(patch: str, added: str) -> Sides:
    """Each hunk's old side (context and removed lines) and new side (context and added
    lines), of the file section of ``patch`` that adds every line of ``added``; ``[]`` when
    none does."""
    lines = {line for line in added.splitlines() if line.strip()}
    sections: list[list[str]] = [[]]
    for line in patch.splitlines():
        if _FILE_HEADER.match(line):
            sections.append([])
        sections[-1].append(line)
    for section in sections:
        hunks = list(_sides(section))
        if lines and lines.issubset(line for _, new, plus in hunks for line in new if line in plus):
            return [(old, new) for old, new, _ in hunks]
    return []


def _sides(section: list[str]) -> Iterator[tuple[list[str], list[str], set[str]]]:
    old: list[str] = []
    new: list[str] = []
    plus: set[str] = set()
    for line in [*section, "@@"]:
        if _HEADER_LINE.match(line):
            while old and new and not old[-1].strip() and not new[-1].strip():
                old, new = old[:-1], new[:-1]
            if plus or old != new:
                yield old, new, plus
            old, new, plus = [], [], set()
        elif line[:1] == "+":
            new.append(line[1:])
            plus.add(line[1:])
        elif line[:1] == "-":
            old.append(line[1:])
        elif line[:1] == " " or not line:
            old.append(line[1:])
            new.append(line[1:])
