"""Names whose values outlive a call of a function: the module's, and a closure's cells."""

from __future__ import annotations

import ast

from safeagents.detectors._ast_facts import FunctionNode, scope_nodes
from safeagents.detectors._module_facts import ModuleFacts

__all__ = ["enclosed_names", "lasting_names", "module_names"]


def lasting_names(tree: ast.AST, facts: ModuleFacts) -> set[str]:
    """Names bound at module level or in a closure handed out, for ``tree`` and its facts."""
    names = module_names(tree) if isinstance(tree, ast.Module) else set()
    return names | enclosed_names(facts)


def module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(statement.name)
        if isinstance(statement, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, ast.AnnAssign):
            targets = [statement.target]
        for target in targets:
            names.update(t.id for t in ast.walk(target) if isinstance(t, ast.Name))
    return names


def enclosed_names(facts: ModuleFacts) -> set[str]:
    """Names bound inside functions that hand a nested function out: those it reads without
    binding them are its closure's cells, which outlive a call as module names do. A helper
    the enclosing function only calls (a ``dfs`` over a ``seen`` set made per call) shares
    nothing between the calls the tests make."""
    nesting = {
        id(scope)
        for _, scope in facts.scoped(ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        if scope is not None
    }
    handing_out = {
        id(function)
        for function in facts.functions
        if id(function) in nesting and _hands_out_inner(function)
    }
    return {
        node.id
        for node, scope in facts.scoped(ast.Name)
        if id(scope) in handing_out and isinstance(node.ctx, ast.Store)
    }


def _hands_out_inner(function: FunctionNode) -> bool:
    """Whether ``function`` lets a function defined in it outlive the call: names it other
    than by calling it (``return inner``, ``registry.append(inner)``) or decorates it."""
    nodes = list(scope_nodes(function.body))
    inner = {
        node.name for node in nodes if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    if any(isinstance(node, ast.Lambda) for node in nodes):
        return True
    if not inner:
        return False
    called = {
        id(node.func)
        for node in nodes
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    return any(
        isinstance(node, ast.Name)
        and node.id in inner
        and isinstance(node.ctx, ast.Load)
        and id(node) not in called
        for node in nodes
    )
