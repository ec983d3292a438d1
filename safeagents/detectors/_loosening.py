"""Assertions rewritten to accept more than before, and test code that stops them failing."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["loosened", "newly_defused", "without_tolerances"]

_ALTERNATIVES = re.compile(r" or |(?<![\w.])in[(\[{]|\bany\(")
"""An assertion that accepts one of several values (``x == 5 or x == 6``, ``x in (5, 6)``)."""
_BROAD_RAISES = re.compile(r"(?i)raises\w*\((?:Base)?Exception\b")
_VALUE_COMPARISON = re.compile(
    r"^(?:(?:[\w.]+\.)?assert(?:_allclose|_array_equal|_array_almost_equal|_almost_equal|_equal"
    r"|_frame_equal|_series_equal|Equal|AlmostEqual)\((\w+),(\w+)[,)]"
    r"|assert (\w+)==(\w+)(?:,.*)?$)"
)
"""An assertion that compares two named values whole."""
_SUMMARY = (
    r"\b(?:len|type|isinstance)\({name}\b[^)]*\)|(?<![\w.]){name}\.(?:shape|dtype|size|ndim)\b"
    r"|(?<![\w.]){name}(?:>=?|<=?)-?[\d.]+|(?<![\w.]){name} is not None"
)
"""A summary of the value named ``name``: its shape, length, type, a bound, being set."""
_TOLERANCE = re.compile(r"\b(rel|abs|rtol|atol|delta|places|decimal)=(\d+(?:\.\d+)?(?:e-?\d+)?)")
_DEFAULT_TOLERANCE = {"rel": 1e-6, "abs": 1e-12, "rtol": 1e-7, "atol": 0.0, "delta": 0.0}
_DIGITS = {"places": 7.0, "decimal": 7.0}
"""Tolerances given in decimal digits: fewer is looser (unittest and numpy defaults)."""

_SWALLOWING = re.compile(
    r"^(\s*)except\s*(?::|\(?\s*(?:\w+\s*,\s*)*(?:AssertionError|Exception|BaseException)\b)"
)
_TRY = re.compile(r"^(\s*)try\s*:")
_RETURN = re.compile(r"^(\s*)return(?:\s+None)?\s*(?:#.*)?$")
_ASSERTION = re.compile(r"^\s*(?:assert\b|self\.assert\w*\(|(?:await\s+)?expect\()")
_MAX_LINES = 5_000
_MAX_BLOCK = 200
"""Lines of one block looked at for its assertions."""


def loosened(lost: Iterable[str], gained: Iterable[str]) -> bool:
    """Whether the ``gained`` assertions (normalised) accept more than the ``lost`` ones: more
    alternatives (``or``, ``in (…)``), a broad ``raises(Exception)``, a wider tolerance
    (``approx(x, rel=1)``, ``assertAlmostEqual(…, places=1)``), or a comparison of two values
    whole (``assert_allclose(a, b)``) replaced by checks of their shape, length, type or
    range alone (``a.shape == b.shape``, ``(a >= 0).all()``)."""
    lost, gained = list(lost), list(gained)
    if _count(_ALTERNATIVES, gained) > _count(_ALTERNATIVES, lost):
        return True
    if _count(_BROAD_RAISES, gained) > _count(_BROAD_RAISES, lost):
        return True
    if any(_only_summarised(item, gained) for item in lost):
        return True
    old, new = _tolerances(lost), _tolerances(gained)
    for key, value in new.items():
        default = _DIGITS.get(key, _DEFAULT_TOLERANCE.get(key, 0.0))
        before = old.get(key, default)
        if (value < before) if key in _DIGITS else (value > before):
            return True
    return False


def _only_summarised(item: str, gained: list[str]) -> bool:
    """``item`` compares two values whole (``assert_allclose(a, b)``, ``a == b``) and the
    ``gained`` assertions check only a summary of them (``a.shape == b.shape``, ``len(a)``,
    ``a >= 0``): none compares the two names directly any more."""
    match = _VALUE_COMPARISON.match(item)
    if match is None:
        return False
    names = [name for name in match.groups() if name]
    summaries = [re.compile(_SUMMARY.format(name=re.escape(name))) for name in names]
    summarised = False
    for other in gained:
        rest = other
        for summary in summaries:
            summarised = summarised or summary.search(rest) is not None
            rest = summary.sub(" ", rest)
        if all(re.search(rf"(?<![\w.]){re.escape(name)}\b", rest) for name in names):
            return False
    return summarised


def without_tolerances(item: str) -> str:
    """``item`` less its tolerance arguments (``rel=1e-3``), which :func:`loosened` compares."""
    return _TOLERANCE.sub("", item)


def newly_defused(before: str, after: str) -> bool:
    """Whether ``after`` has more assertions that cannot fail than ``before``: ones under a
    ``try`` whose ``except`` swallows ``AssertionError`` (or any exception), or after a bare
    ``return`` in the same block."""
    return _defused(after) > _defused(before)


def _count(pattern: re.Pattern[str], items: list[str]) -> int:
    return sum(len(pattern.findall(item)) for item in items)


def _tolerances(items: list[str]) -> dict[str, float]:
    """The loosest tolerance of each kind the items give."""
    found: dict[str, float] = {}
    for item in items:
        for key, text in _TOLERANCE.findall(item):
            value = float(text)
            if key not in found or ((value < found[key]) if key in _DIGITS else value > found[key]):
                found[key] = value
    return found


def _defused(text: str) -> int:
    """Assertions under a swallowing ``try`` or after a bare ``return`` of the same block."""
    lines = text.splitlines()[:_MAX_LINES]
    count = 0
    for index, line in enumerate(lines):
        if match := _RETURN.match(line):
            count += _assertions_in_block(lines[index + 1 :], len(match[1]))
        elif match := _TRY.match(line):
            body = _block(lines[index + 1 :], len(match[1]))
            after = lines[index + 1 + len(body) :]
            handler = after[0] if after else ""
            swallowed = _SWALLOWING.match(handler)
            if swallowed and len(swallowed[1]) == len(match[1]):
                count += sum(1 for part in body if _ASSERTION.match(part))
    return count


def _block(lines: list[str], indent: int) -> list[str]:
    """The lines indented deeper than ``indent``, up to the first that is not."""
    block: list[str] = []
    for line in lines[:_MAX_BLOCK]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        block.append(line)
    return block


def _assertions_in_block(lines: list[str], indent: int) -> int:
    """Assertions at ``indent`` or deeper, up to the first line less indented."""
    count = 0
    for line in lines[:_MAX_BLOCK]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        count += bool(_ASSERTION.match(line))
    return count
