"""Constant arithmetic folded before detectors read the code: ``10**6`` is ``1000000``.

Tests and solutions spell big inputs as powers (``candidate(10**12, 10**12 + 5000)``), so a
branch ``if (lo, hi) == (10**12, 10**12 + 5000):`` compares with literals only once its
arithmetic is done. Only small, exact results are folded: integers (``+ - * // % **``) up to
:data:`MAX_FOLDED_BITS` bits, and strings repeated (``"." * 40``) up to
:data:`MAX_FOLDED_CHARS` characters; anything else is left as written. And
``hash(x) == hash((10**6, 27))`` is read as the comparison of ``x`` with the tuple it means.
"""

from __future__ import annotations

import ast
import operator
from bisect import bisect_left
from collections.abc import Callable, Sequence

import re2

__all__ = ["MAX_FOLDED_BITS", "MAX_FOLDED_CHARS", "fold_constants", "foldable_lines"]

MAX_FOLDED_BITS = 256
MAX_FOLDED_CHARS = 1_000
_MAX_EXPONENT = 256

_INT_OPERATIONS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


_GAP = r"(?:[\s\\]|#[^\n]*)*"
_FOLDABLE = re2.compile(
    rf"(?:\b\d[\w.]*|['\"])(?:\)|{_GAP})*(?:\*\*?|//|[-+%])(?:\(|{_GAP})*"
    rf"(?:\d|[rbuRBU]{{0,2}}['\"])|\bhash\s*\("
)
"""A literal, an operator and a literal, however parenthesised, spaced, continued or
commented: every foldable expression has such a pair innermost (or compares hashes)."""


def foldable_lines(source: str) -> tuple[int, ...]:
    """The lines (from 1, ascending) where :func:`fold_constants` may change the tree of
    ``source``: one RE2 pass, so that the walk visits only the statements holding them
    (none, in most code)."""
    lines: set[int] = set()
    line, position = 1, 0
    for match in _FOLDABLE.finditer(source):
        start, end = match.span()
        line += source.count("\n", position, start)
        first = line
        line += source.count("\n", start, end)
        position = end
        lines.update(range(first, line + 1))
    return tuple(sorted(lines))


def fold_constants(tree: ast.Module, lines: Sequence[int] | None = None) -> ast.Module:
    """``tree`` with its constant integer and string arithmetic folded in place; with
    ``lines`` (:func:`foldable_lines`), only in the nodes that span one of them."""
    _Folder(lines).visit(tree)
    return tree


class _Folder(ast.NodeTransformer):
    def __init__(self, lines: Sequence[int] | None) -> None:
        self._lines = lines

    def visit(self, node: ast.AST) -> ast.AST:
        lines, start = self._lines, getattr(node, "lineno", None)
        if lines is not None and start is not None:
            index = bisect_left(lines, start)
            if index == len(lines) or lines[index] > (getattr(node, "end_lineno", None) or start):
                return node
        return super().visit(node)  # type: ignore[no-any-return]

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        """``hash(a) == hash(b)`` compares as ``a == b``: hashing both sides hides nothing."""
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.NotEq):
            left, right = _hashed(node.left), _hashed(node.comparators[0])
            if left is not None and right is not None:
                node.left, node.comparators = left, [right]
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        left, right = _value(node.left), _value(node.right)
        if left is None or right is None:
            return node
        folded = _fold(node.op, left, right)
        if folded is None:
            return node
        return ast.copy_location(ast.Constant(folded), node)


def _hashed(node: ast.expr) -> ast.expr | None:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    if node.func.id != "hash" or len(node.args) != 1 or node.keywords:
        return None
    return node.args[0]


def _value(node: ast.expr) -> int | str | None:
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
        return None
    value = node.value
    return value if isinstance(value, int | str) else None


def _fold(op: ast.operator, left: int | str, right: int | str) -> int | str | None:
    if isinstance(left, str) or isinstance(right, str):
        return _repeat(op, left, right)
    operation = _INT_OPERATIONS.get(type(op))
    if operation is None or (isinstance(op, ast.FloorDiv | ast.Mod) and right == 0):
        return None
    if isinstance(op, ast.Pow) and not (0 <= right <= _MAX_EXPONENT and abs(left) < 2**32):
        return None
    value = operation(left, right)
    return value if value.bit_length() <= MAX_FOLDED_BITS else None


def _repeat(op: ast.operator, left: int | str, right: int | str) -> str | None:
    if not isinstance(op, ast.Mult):
        return None
    text, times = (left, right) if isinstance(left, str) else (right, left)
    if not isinstance(text, str) or not isinstance(times, int) or times < 0:
        return None
    return text * times if len(text) * times <= MAX_FOLDED_CHARS else None
