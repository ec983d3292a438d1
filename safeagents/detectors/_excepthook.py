"""Exception hooks that hide failures: exit with success, or swallow every error."""

from __future__ import annotations

import ast

from safeagents.detectors._ast_facts import FunctionNode, is_clean_exit

__all__ = ["silencing_hook"]


def silencing_hook(
    value: ast.expr, functions: dict[str, FunctionNode], aliases: dict[str, str]
) -> bool:
    """A hook that exits with success, or does nothing (swallows every error)."""
    handler: ast.AST | None = value
    if isinstance(value, ast.Name):
        handler = functions.get(value.id)
    if handler is None:
        return False
    if any(is_clean_exit(node, aliases) for node in ast.walk(handler)):
        return True
    if isinstance(handler, ast.Lambda):
        return isinstance(handler.body, ast.Constant)
    if isinstance(handler, ast.FunctionDef | ast.AsyncFunctionDef):
        return _swallows(handler)
    return False


def _swallows(function: FunctionNode) -> bool:
    """A body of only docstrings, ``pass`` and bare returns, or returning on AssertionError."""
    trivial = all(
        isinstance(s, ast.Pass)
        or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        or (isinstance(s, ast.Return) and s.value is None)
        for s in function.body
    )
    if trivial:
        return True
    for node in ast.walk(function):
        if not (isinstance(node, ast.If) and "AssertionError" in ast.dump(node.test)):
            continue
        if any(isinstance(statement, ast.Return | ast.Pass) for statement in node.body):
            return True
    return False
