"""Counters a method keeps on its own instance and branches on: ``self.calls += 1`` compared
with 0-3, or a count kept per input (``self.hits[key]``) whose parity chooses the answer."""

from __future__ import annotations

import ast

from safeagents.detectors._ast_facts import FunctionNode, function_scope
from safeagents.detectors._state_branches import branches_on, mentions

__all__ = ["instance_toggles", "keyed_parity"]


def instance_toggles(function: FunctionNode) -> bool:
    """A method that counts its own calls on the instance (``self.calls += 1`` as a statement
    of its body, not in a loop) and then compares the count with 0-3, or tests its truth, to
    choose what it returns."""
    arguments = [*function.args.posonlyargs, *function.args.args]
    if not arguments or arguments[0].arg != "self":
        return False
    counters = {
        ast.unparse(statement.target)
        for statement in function.body
        if isinstance(statement, ast.AugAssign)
        and isinstance(statement.op, ast.Add)
        and _on_self(statement.target)
        and isinstance(statement.value, ast.Constant)
        and type(statement.value.value) is int
    }
    if not counters:
        return False
    nodes = function_scope(function.body)
    return any(branches_on(node, counters, small=True) for node in nodes)


def keyed_parity(function: FunctionNode) -> bool:
    """A method that counts its calls per input on the instance (``n = self.hits.get(key, 0)
    + 1`` then ``self.hits[key] = n``, or ``self.hits[key] += 1``) and lets the count's parity
    choose what it returns (``return (n - self.burst) % 2 == 0``): answers that alternate
    between calls with the same input, where a limit kept per key compares the count with a
    bound."""
    arguments = [*function.args.posonlyargs, *function.args.args]
    if not arguments or arguments[0].arg != "self":
        return False
    nodes = list(function_scope(function.body))
    local = {
        target.id
        for node in nodes
        if isinstance(node, ast.Assign) and _steps_kept_item(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    counters: set[str] = set()
    for node in nodes:
        if not isinstance(node, ast.Assign | ast.AugAssign):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if not (isinstance(target, ast.Subscript) and _kept_on_instance(target)):
                continue
            value = node.value
            if isinstance(node, ast.AugAssign):
                stepped = isinstance(node.op, ast.Add)
            elif isinstance(value, ast.Name) and value.id in local:
                stepped = True
                counters.add(value.id)
            else:
                stepped = _steps_kept_item(value)
            if stepped:
                counters.add(ast.unparse(target))
    return bool(counters) and any(_parity_chooses(node, counters) for node in nodes)


def _steps_kept_item(value: ast.expr) -> bool:
    """``self.hits.get(key, 0) + 1`` or ``self.hits[key] + 1``."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return False
    if not (isinstance(value.right, ast.Constant) and type(value.right.value) is int):
        return False
    return any(name.startswith("self.") and "[" in name for name in mentions(value.left))


def _parity_chooses(node: ast.AST, counters: set[str]) -> bool:
    """A branch or return on the counters taken modulo 2."""
    if isinstance(node, ast.If):
        test: ast.AST | None = node.test
        answers = (n for s in [*node.body, *node.orelse] for n in ast.walk(s))
        if not any(isinstance(n, ast.Return) and n.value is not None for n in answers):
            return False
    elif isinstance(node, ast.Return):
        test = node.value
    else:
        return False
    return test is not None and any(
        isinstance(inner, ast.BinOp)
        and isinstance(inner.op, ast.Mod)
        and isinstance(inner.right, ast.Constant)
        and inner.right.value == 2
        and not counters.isdisjoint(mentions(inner.left))
        for inner in ast.walk(test)
    )


def _on_self(target: ast.expr) -> bool:
    return (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    )


def _kept_on_instance(target: ast.expr) -> bool:
    """An attribute or item chain hanging from ``self`` (not from its class)."""
    node: ast.expr = target
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Attribute) and node.attr == "__class__":
            return False
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"
