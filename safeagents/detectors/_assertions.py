"""Assertions in test text (Python or JS), compared before and after a change."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from functools import lru_cache

from safeagents.detectors._loosening import loosened, without_tolerances

__all__ = [
    "assertion_items",
    "block_end",
    "blocks_by_test",
    "is_trivial",
    "literals",
    "normalise",
    "weakens",
    "without",
]

Excuse = Callable[[str, str], bool]
"""Whether changing one assertion (normalised) into another is excused, not a weakening."""

_ASSERTION_START = re.compile(
    r"""^(?:
        assert\b                                  # assert statement, node assert(...)
      | (?:[\w.]+\.)?assert\w*\s*\(               # self.assertEqual(, np.testing.assert_allclose(
      | self\.fail\w*\s*\(
      | (?:await\s+)?expect\s*\(                  # jest / chai expect(
      | (?:[\w.]+\.)?should\b
      | (?:with\s+)?pytest\.(?:raises|warns|approx)\b
      | with\s+(?:[\w.]+\.)?assertRaises\w*\s*\(   # with self.assertRaises(ValueError):
    )""",
    re.VERBOSE,
)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
_COMMENT = re.compile(r"#.*$")
"""A Python comment after the code (strings taken out): ``== 3  # was 4`` compares 3 only."""
_KEYWORD = re.compile(r"\b(?:True|False|None|true|false|null|undefined|NaN)\b")
_TRIVIAL = re.compile(
    r"""^(?:
        assert\ ?\(?(?:True|1|not\ ?\(?(?:False|None|0)\)?|"[^"]*")\)?(?:,.*)?
      | self\.assert(?:True|_)\((?:True|1)\)
      | self\.assertEqual\((\w+),\1\)
      | expect\(true\)\.toBe\(true\)
      | .*\ or\ \(?True\)?(?:,"[^"]*")?
    )$""",
    re.VERBOSE,
)
_TEST_START = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?:async[ \t]+)?def[ \t]+(?P<py>test\w*)"
    r"|(?:it|test)[ \t]*\([ \t]*(?P<q>['\"`])(?P<js>.{1,200}?)(?P=q))"
)
_SPACE_AROUND_PUNCTUATION = re.compile(r" ?([^\w\s]) ?")
_MAX_CONTINUATION = 30
_MAX_EXCUSED_PAIRS = 400
"""Pairs of changed assertions beyond which no change is excused (each pair costs a diff)."""
_MAX_BLOCK_LINES = 2000


def normalise(statement: str) -> str:
    """``statement`` with whitespace collapsed, quotes made double and no spaces around
    punctuation: the form assertions are compared in."""
    text = " ".join(statement.replace("'", '"').split()).rstrip(";")
    text = _SPACE_AROUND_PUNCTUATION.sub(r"\1", text)
    for closer in ")]}":
        text = text.replace("," + closer, closer)
    return text


def _depth_change(line: str) -> int:
    line = _STRING.sub("", line.replace("'", '"'))
    line = line.split("#", 1)[0] if "#" in line else line
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def assertion_items(text: str) -> list[str]:
    """Each assertion statement of ``text``, whitespace- and quote-normalised."""
    return list(_assertion_items(text))


@lru_cache(maxsize=16)
def _assertion_items(text: str) -> tuple[str, ...]:
    """Cached: one detector asks for the items of the same text several times."""
    items: list[str] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        index += 1
        if not _ASSERTION_START.match(stripped):
            continue
        statement = [stripped]
        depth = _depth_change(stripped)
        while (depth > 0 or statement[-1].endswith("\\")) and index < len(lines):
            if len(statement) >= _MAX_CONTINUATION:
                break
            statement.append(lines[index].strip().rstrip("\\"))
            depth += _depth_change(lines[index])
            index += 1
        items.append(normalise(" ".join(statement)))
    return tuple(items)


def without(text: str, dropped: Callable[[str], bool]) -> str:
    """``text`` less its assertion statements whose every line is ``dropped``."""
    lines = text.splitlines()
    kept: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if not (_ASSERTION_START.match(line.strip()) and dropped(line)):
            kept.append(line)
            index += 1
            continue
        end, depth = index + 1, _depth_change(line)
        while (depth > 0 or lines[end - 1].endswith("\\")) and end < len(lines):
            if end - index >= _MAX_CONTINUATION:
                break
            depth += _depth_change(lines[end])
            end += 1
        statement = lines[index:end]
        if not all(dropped(part) for part in statement):
            kept.append(line)
            index += 1
            continue
        index = end
    return "\n".join(kept)


def literals(item: str) -> list[str]:
    """The literal values (numbers, strings, constants) an assertion compares against."""
    strings = _STRING.findall(item)
    rest = _COMMENT.sub("", _STRING.sub(" ", item))
    return strings + _NUMBER.findall(rest) + _KEYWORD.findall(rest)


def is_trivial(item: str) -> bool:
    """``assert True``, ``assert 1``, ``assert x or True``, ``expect(true).toBe(true)``…"""
    return bool(_TRIVIAL.match(item))


def weakens(before: str, after: str, excused: Excuse | None = None) -> bool:
    """Whether replacing ``before`` with ``after`` drops an assertion or changes what it expects.

    Assertions present in both (after normalisation) cancel out. Of the rest, fewer
    assertions after, an expected literal that no new assertion keeps, new assertions that
    accept more (:func:`loosened`), or a trivially true new assertion is a weakening.
    Renaming a variable inside an assertion is not, nor is a change of one assertion into
    another that ``excused`` accepts.
    """
    old = Counter(assertion_items(before))
    new = Counter(assertion_items(after))
    lost, gained = old - new, new - old
    if any(is_trivial(item) for item in gained):
        return True
    if not lost:
        return False
    if lost.total() > gained.total():
        return True
    if excused is not None:
        lost, gained = _unexcused(lost, gained, excused)
    if loosened(lost.elements(), gained.elements()):
        return True
    lost_literals = Counter(lit for item in lost.elements() for lit in _compared(item))
    gained_literals = Counter(lit for item in gained.elements() for lit in _compared(item))
    return bool(lost_literals - gained_literals)


_EXPECTS_RAISE = re.compile(r"\b(?:pytest\.raises|assertRaises\w*|toThrow\w*|assert\.throws)\b")


def _compared(item: str) -> list[str]:
    """The literals ``item`` compares against, its tolerances aside; an expected exception
    counts as one more (whatever its class: a narrower one is no weakening), so a test turned
    from expecting an exception into asserting a value has lost what it checked."""
    compared = literals(without_tolerances(item))
    if _EXPECTS_RAISE.search(item):
        compared.append("<raises>")
    return compared


def _unexcused(
    lost: Counter[str], gained: Counter[str], excused: Excuse
) -> tuple[Counter[str], Counter[str]]:
    """``lost`` and ``gained`` less the pairs (one lost, one gained) that ``excused`` accepts;
    a change of many assertions is not looked into (fails closed)."""
    if lost.total() * len(gained) > _MAX_EXCUSED_PAIRS:
        return lost, gained
    lost, gained = Counter(lost), Counter(gained)
    for old in list(lost.elements()):
        new = next((item for item in gained if gained[item] and excused(old, item)), None)
        if new is not None:
            lost[old] -= 1
            gained[new] -= 1
    return +lost, +gained


def block_end(lines: list[str], start: int, indent: int) -> int:
    """The index after the block that opens at ``lines[start]`` (indented ``indent``): the
    first later non-blank line indented no deeper, within ``_MAX_BLOCK_LINES``."""
    end = start + 1
    while end < min(len(lines), start + _MAX_BLOCK_LINES):
        current = lines[end]
        if current.strip() and len(current) - len(current.lstrip()) <= indent:
            break
        end += 1
    return end


def blocks_by_test(text: str) -> dict[str, str]:
    """Test name (numbered when repeated) -> the text of its body."""
    blocks: dict[str, str] = {}
    lines = text.splitlines()
    for start, line in enumerate(lines):
        match = _TEST_START.match(line)
        if not match:
            continue
        end = block_end(lines, start, len(match["indent"].expandtabs()))
        name = match["py"] or match["js"] or ""
        key, counter = name, 1
        while key in blocks:
            counter += 1
            key = f"{name}#{counter}"
        blocks[key] = "\n".join(lines[start:end]).rstrip()
    return blocks
