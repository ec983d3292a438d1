"""The one shared walk: same nodes and order as ``ast.walk``, right scopes, computed once."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from safeagents.detectors import _module_facts
from safeagents.detectors._ast_facts import defined_functions, import_aliases
from safeagents.detectors._module_facts import ModuleFacts, Scope, module_facts

SOURCE = """
import os.path as p, sys
from json import loads as L
from . import sibling

@decorate(lambda q: q[0])
def outer(a, b=[i for i in range(3)], *rest, k=lambda: 1, **kw):
    x = a if b else -a
    class Inner:
        y = {1: 2, **kw}
        def method(self, z: int = 0) -> int:
            return (lambda w: w.v)(z) + self.y[1]
    async def nested():
        async with ctx() as c:
            async for item in c:
                await item
    try:
        pass
    except (ValueError, KeyError) as error:
        raise SystemExit from error
    finally:
        del x
    match a:
        case [1, *others] if others:
            return f"{a!r:>{b}}"
        case {"k": v, **more}:
            return v
        case Point(x=0) | None:
            return None
    global g
    return not a and b or a < b <= 3

def outer():
    nonlocal_free = 1
"""

_LEAVES = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def _sources() -> Iterator[str]:
    yield SOURCE
    yield "x = 1"
    yield ""
    for module in (_module_facts, ast):
        assert module.__file__ is not None
        with open(module.__file__, encoding="utf-8") as handle:
            yield handle.read()


def _expected_scopes(tree: ast.AST) -> dict[int, Scope]:
    """Innermost function or lambda of every node, from a recursive descent."""
    scopes: dict[int, Scope] = {}

    def visit(node: ast.AST, scope: Scope) -> None:
        scopes[id(node)] = scope
        inner = (
            node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) else scope
        )
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, None)
    return scopes


@pytest.mark.parametrize("source", list(_sources()))
def test_nodes_are_ast_walk_without_operators_and_contexts(source: str) -> None:
    tree = ast.parse(source)
    facts = ModuleFacts(tree)
    expected = [node for node in ast.walk(tree) if not isinstance(node, _LEAVES)]
    assert [id(node) for node in facts.nodes] == [id(node) for node in expected]
    for types in [(ast.Call,), (ast.Assign, ast.AugAssign, ast.Call), (ast.Lambda, ast.Return)]:
        wanted = [id(node) for node in expected if type(node) in types]
        assert [id(node) for node in facts.of(*types)] == wanted
        assert [id(node) for node, _ in facts.scoped(*types)] == wanted


@pytest.mark.parametrize("source", list(_sources()))
def test_scopes_are_the_innermost_function_or_lambda(source: str) -> None:
    tree = ast.parse(source)
    facts = ModuleFacts(tree)
    expected = _expected_scopes(tree)
    pairs = zip(facts.nodes, facts.scopes, strict=True)
    assert all(expected[id(node)] is scope for node, scope in pairs)


def test_derived_facts_match_the_walking_helpers() -> None:
    tree = ast.parse(SOURCE)
    facts = ModuleFacts(tree)
    aliases = {"p": "os.path", "sys": "sys", "L": "json.loads"}
    assert facts.aliases == import_aliases(tree) == aliases
    walked = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    assert facts.functions == walked
    assert {id(f) for f in defined_functions(tree)} == {id(f) for f in walked}
    outers = [f for f in walked if f.name == "outer"]
    assert facts.first_function("outer") is outers[0]
    assert facts.functions_by_name["outer"] is outers[-1]
    assert facts.first_function("missing") is None
    method = facts.functions_by_name["method"]
    lambdas = facts.of(ast.Lambda)
    returned = [r for r, scope in facts.scoped(ast.Return) if scope is method]
    assert len(returned) == 1 and len(lambdas) == 3


def test_facts_are_computed_once_per_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    walks: list[ast.AST] = []
    original = _module_facts._walk

    def counting(tree: ast.AST) -> tuple[list[ast.AST], list[Scope], dict[type, list[int]]]:
        walks.append(tree)
        return original(tree)

    monkeypatch.setattr(_module_facts, "_walk", counting)
    first, second = ast.parse("a = 1"), ast.parse("a = 1")
    assert module_facts(first) is module_facts(first)
    assert module_facts(second) is not module_facts(first)
    assert walks == [first, second]
    others = [ast.parse("b = 2") for _ in range(_module_facts._CACHE_SIZE)]
    for other in others:
        module_facts(other)
    assert len(_module_facts._cache) == _module_facts._CACHE_SIZE
    module_facts(first)
    assert walks.count(first) == 2  # pushed out by the others, so walked again
