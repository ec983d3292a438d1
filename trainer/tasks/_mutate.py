"""Behaviour-changing AST mutations of one function, applied to its source text so that the
rest of the file keeps its formatting: a flipped comparison, arithmetic or boolean
operator, an off-by-one constant, a dropped ``not``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Mutation", "mutations"]

_COMPARE = {
    ast.Lt: ("<", "<="),
    ast.LtE: ("<=", "<"),
    ast.Gt: (">", ">="),
    ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="),
    ast.NotEq: ("!=", "=="),
    ast.In: ("in", "not in"),
    ast.NotIn: ("not in", "in"),
}
_BINARY = {
    ast.Add: ("+", "-"),
    ast.Sub: ("-", "+"),
    ast.Mult: ("*", "+"),
    ast.FloorDiv: ("//", "*"),
    ast.Mod: ("%", "//"),
}
_BOOLEAN = {ast.And: ("and", "or"), ast.Or: ("or", "and")}


@dataclass(frozen=True, slots=True)
class Mutation:
    """Replace bytes ``start:end`` of the file (UTF-8) by ``replacement``."""

    line: int
    start: int
    end: int
    original: str
    replacement: str

    def apply(self, text: str) -> str:
        data = text.encode("utf-8")
        return (data[: self.start] + self.replacement.encode() + data[self.end :]).decode("utf-8")

    @property
    def description(self) -> str:
        return f"line {self.line}: {self.original!r} -> {self.replacement!r}"


class _Offsets:
    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8")
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def at(self, line: int, column: int) -> int:
        return self.starts[line - 1] + column


def _between(
    offsets: _Offsets, left: ast.expr, right: ast.expr, token: str, new: str
) -> Mutation | None:
    """``token`` in the gap between two operands (only spaces, brackets and it)."""
    if left.end_lineno is None or left.end_col_offset is None:
        return None
    start = offsets.at(left.end_lineno, left.end_col_offset)
    end = offsets.at(right.lineno, right.col_offset)
    gap = offsets.data[start:end].decode("utf-8", errors="replace")
    found = gap.find(token)
    if found < 0 or "#" in gap:
        return None
    begin = start + len(gap[:found].encode())
    return Mutation(left.end_lineno, begin, begin + len(token.encode()), token, new)


def _node_mutations(offsets: _Offsets, node: ast.AST) -> Iterator[Mutation]:
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        pair = _COMPARE.get(type(node.ops[0]))
        if pair and (found := _between(offsets, node.left, node.comparators[0], *pair)):
            yield found
    elif isinstance(node, ast.BinOp):
        pair = _BINARY.get(type(node.op))
        if pair and (found := _between(offsets, node.left, node.right, *pair)):
            yield found
    elif isinstance(node, ast.BoolOp):
        old, new = _BOOLEAN[type(node.op)]
        if found := _between(offsets, node.values[0], node.values[1], old, new):
            yield found
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        start = offsets.at(node.lineno, node.col_offset)
        end = offsets.at(node.operand.lineno, node.operand.col_offset)
        if offsets.data[start:end].strip() == b"not":
            yield Mutation(node.lineno, start, end, "not ", "")
    elif isinstance(node, ast.Constant) and node.end_col_offset is not None:
        start = offsets.at(node.lineno, node.col_offset)
        end = offsets.at(node.lineno, node.end_col_offset)
        written = offsets.data[start:end].decode("utf-8", errors="replace")
        if node.value is True or node.value is False:
            yield Mutation(node.lineno, start, end, written, str(not node.value))
        elif type(node.value) is int and written.isdigit():
            yield Mutation(node.lineno, start, end, written, str(node.value + 1))


def mutations(text: str, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Mutation]:
    """Every mutation site in ``function``'s body (not its docstring, defaults or
    decorators), in source order; each applied alone still parses."""
    offsets = _Offsets(text)
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    found: list[Mutation] = []
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue  # nested code has its own tests, or none
        pending.extend(ast.iter_child_nodes(node))
        for mutation in _node_mutations(offsets, node):
            try:
                ast.parse(mutation.apply(text))
            except SyntaxError:
                continue
            found.append(mutation)
    return sorted(set(found), key=lambda m: m.start)
