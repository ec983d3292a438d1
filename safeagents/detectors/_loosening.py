"""Assertions rewritten to accept more than before, and test code that stops them failing."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["loosened", "newly_defused", "without_tolerances"]

_ALTERNATIVES = re.compile(r" or |(?<![\w.])in[(\[{]|\bany\(")
"""An assertion that accepts one of several values (``x == 5 or x == 6``, ``x in (5, 6)``)."""
_BROAD_RAISES = re.compile(r"(?i)raises\w*\((?:Base)?Exception\b")
_EXACT = frozenset(
    {
        "assertEqual",
        "assertEquals",
        "assertAlmostEqual",
        "assertIs",
        "assert_equal",
        "assert_allclose",
        "assert_array_equal",
        "assert_array_almost_equal",
        "assert_almost_equal",
        "assert_frame_equal",
        "assert_series_equal",
        "assert_index_equal",
    }
)
"""Assertion functions that compare their first two arguments whole."""
_PROPERTIES = frozenset(
    {
        "isfinite",
        "isnan",
        "isinf",
        "isreal",
        "iscomplex",
        "isinstance",
        "issubclass",
        "callable",
        "hasattr",
        "len",
        "type",
        "bool",
        "all",
        "any",
        "assertTrue",
        "assertFalse",
        "assertIsNotNone",
        "assertIsInstance",
        "assertIn",
        "assertNotEqual",
        "assertGreater",
        "assertGreaterEqual",
        "assertLess",
        "assertLessEqual",
    }
)
"""Functions that check a property of their first argument, not its value."""
_SUMMARY_ATTRIBUTES = frozenset({"shape", "dtype", "size", "ndim", "__class__"})
_LOOSE_COMPARISONS = (ast.IsNot, ast.In, ast.NotIn, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.NotEq)
"""``a is not None``, ``a in (…)``, a bound, ``a != b``: each holds for many values."""
_EXACT_PLACE, _SUMMARY_PLACE, _OTHER_PLACE = "exact", "summary", "other"
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
    (``approx(x, rel=1)``, ``assertAlmostEqual(…, places=1)``), or an exact comparison of
    two values (``assert_allclose(a, b)``, ``f(x) == -np.inf``) replaced by checks of a
    property alone: shape, length, type, range (``a.shape == b.shape``, ``(a >= 0).all()``)
    or a check many values pass (``not np.isfinite(f(x))``, ``f(x) is not None``)."""
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
    """``item`` compares two values whole (``assert_allclose(a, b)``, ``f(x) == -np.inf``)
    and the ``gained`` assertions check only a property of them: a summary
    (``a.shape == b.shape``, ``len(a)``, ``a >= 0``) or a check that holds for many values
    (``not np.isfinite(f(x))``, ``f(x) is not None``, ``isinstance(f(x), float)``,
    ``f(x) in (…)``). None compares either value whole any more, nor mentions both."""
    operands = _compared_whole(item)
    if operands is None:
        return False
    summarised = False
    for other in gained:
        places = _places(other, operands)
        if places is None:
            continue
        if _EXACT_PLACE in places.values() or all(
            key in places and places[key] != _SUMMARY_PLACE for key in operands
        ):
            return False
        summarised = summarised or _SUMMARY_PLACE in places.values()
    return summarised


def _compared_whole(item: str) -> set[str] | None:
    """The two operands (as :func:`ast.dump` keys) of an exact comparison: ``a == b`` or an
    assertion function of :data:`_EXACT`."""
    statement = _statement(item)
    if isinstance(statement, ast.Assert):
        test = statement.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            return {ast.dump(test.left), ast.dump(test.comparators[0])}
        return None
    call = statement.value if isinstance(statement, ast.Expr) else None
    if isinstance(call, ast.Call) and _called(call) in _EXACT and len(call.args) >= 2:
        return {ast.dump(call.args[0]), ast.dump(call.args[1])}
    return None


def _places(item: str, operands: set[str]) -> dict[str, str] | None:
    """Where ``item`` uses each of ``operands``: compared whole (``exact``), only by a
    property (``summary``) or in some other expression (``other``, which wins over
    ``summary``); ``None`` when ``item`` does not parse."""
    statement = _statement(item)
    if statement is None:
        return None
    places: dict[str, str] = {}
    for parent in ast.walk(statement):
        for child in ast.iter_child_nodes(parent):
            if not isinstance(child, ast.expr) or (key := ast.dump(child)) not in operands:
                continue
            place = _place(parent, child)
            if places.get(key) in (None, _SUMMARY_PLACE) or place == _EXACT_PLACE:
                places[key] = place
    return places


def _place(parent: ast.AST, child: ast.expr) -> str:
    if isinstance(parent, ast.Assert):  # its truth alone
        return _SUMMARY_PLACE if child is parent.test else _OTHER_PLACE
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return _SUMMARY_PLACE
    if isinstance(parent, ast.Compare):
        if len(parent.ops) == 1 and isinstance(parent.ops[0], ast.Eq):
            return _EXACT_PLACE
        if all(isinstance(op, _LOOSE_COMPARISONS) for op in parent.ops):
            return _SUMMARY_PLACE
        return _OTHER_PLACE
    if isinstance(parent, ast.Attribute) and parent.attr in _SUMMARY_ATTRIBUTES:
        return _SUMMARY_PLACE
    if isinstance(parent, ast.Call):
        name = _called(parent)
        if name in _EXACT and child in parent.args[:2]:
            return _EXACT_PLACE
        if name in _PROPERTIES and parent.args and child is parent.args[0]:
            return _SUMMARY_PLACE
    return _OTHER_PLACE


@lru_cache(maxsize=256)
def _statement(item: str) -> ast.stmt | None:
    """The one statement ``item`` is (cached: each gained item is asked of every lost one)."""
    try:
        body = ast.parse(item).body
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    return body[0] if len(body) == 1 else None


def _called(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


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
