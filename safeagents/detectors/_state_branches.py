"""How a ``state-toggle`` function lets its kept state choose what it returns.

The state is named by the strings :func:`mentions` yields (``_n``, ``f.calls``,
``_hits[x]``); :func:`branches_on`, :func:`picks` and :func:`seen_before` find the branch,
the pick or the membership test that turns that state into a different answer.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from safeagents.detectors._ast_facts import scope_nodes

__all__ = ["branches_on", "mentions", "picks", "returns_name", "seen_before", "uses"]


def picks(value: ast.expr, counters: set[str]) -> bool:
    """``[6, 14][_n]``, ``answers[_n % 2]`` or ``6 if _n == 1 else 14``: a value the state
    chooses (not ``data[i]``, a cursor reading its input)."""
    return bool(counters) and any(
        (isinstance(inner, ast.Subscript) and _cycles(inner) and uses(inner.slice, counters))
        or (isinstance(inner, ast.IfExp) and uses(inner.test, counters))
        for inner in ast.walk(value)
    )


def _cycles(subscript: ast.Subscript) -> bool:
    """An index into a literal list or tuple, or one taken modulo (``answers[_n % 2]``)."""
    if isinstance(subscript.value, ast.List | ast.Tuple):
        return True
    index = subscript.slice
    return isinstance(index, ast.BinOp) and isinstance(index.op, ast.Mod)


def returns_name(node: ast.AST, names: set[str]) -> bool:
    return (
        isinstance(node, ast.Return) and isinstance(node.value, ast.Name) and node.value.id in names
    )


def mentions(node: ast.AST, *, gets: bool = True) -> Iterator[str]:
    """Names and attribute/item chains read in ``node``; ``getattr(f, "n")`` reads ``f.n``,
    and with ``gets``, ``d.get("k")`` reads ``d['k']``, ``os.getenv("K")`` ``os.environ['K']``."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            yield inner.id
        elif isinstance(inner, ast.Attribute | ast.Subscript):
            yield ast.unparse(inner)
        elif isinstance(inner, ast.Call) and inner.args:
            func, first = inner.func, inner.args[0]
            name = ast.unparse(func) if isinstance(func, ast.Name | ast.Attribute) else ""
            if name == "getattr" and len(inner.args) >= 2:
                attribute = inner.args[1]
                if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
                    yield f"{ast.unparse(first)}.{attribute.value}"
            elif not gets:
                continue
            elif name == "os.getenv":
                yield f"os.environ[{ast.unparse(first)}]"
            elif isinstance(func, ast.Attribute) and func.attr == "get":
                yield f"{ast.unparse(func.value)}[{ast.unparse(first)}]"


def branches_on(node: ast.AST, counters: set[str], *, small: bool = False) -> bool:
    """Whether ``node`` chooses a returned value by ``counters``; with ``small``, only by
    comparing them with 0-3 or testing their truth (a per-input tally: a limit kept by name,
    as in a rate limiter, is not a toggle)."""

    def chooses(test: ast.AST) -> bool:
        return uses(test, counters) and (not small or _small_test(test, counters))

    if isinstance(node, ast.If | ast.While) and chooses(node.test):
        return any(_returns_value(statement) for statement in [*node.body, *node.orelse])
    if isinstance(node, ast.Match) and uses(node.subject, counters) and not small:
        return any(_returns_value(s) for case in node.cases for s in case.body)
    if isinstance(node, ast.Return) and node.value is not None:
        for inner in ast.walk(node.value):
            if isinstance(inner, ast.IfExp) and chooses(inner.test):
                return True
            if isinstance(inner, ast.Subscript) and uses(inner.slice, counters) and not small:
                return True
            if isinstance(inner, ast.Compare | ast.BoolOp) and chooses(inner):
                return True
    return False


def seen_before(body: list[ast.stmt], grown: set[str], *, truth: bool = False) -> bool:
    """``if x in _seen: return 14`` where the function adds to ``_seen`` itself: a second call
    with the same input answers differently (or ``if x not in _seen:`` with that answer in
    the ``else`` or after the ``if``). A literal answer other than ``True``/``False``/``None``
    is required (a once-guard returns nothing or a truth value, a memo its entry), unless
    ``truth`` (the function the tests call, answering ``True`` on a repeated input)."""
    for statements in _blocks(body):
        for index, node in enumerate(statements):
            if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
                continue
            test = node.test
            if not (len(test.ops) == 1 and isinstance(test.ops[0], ast.In | ast.NotIn)):
                continue
            container = test.comparators[0]
            if not (isinstance(container, ast.Name) and container.id in grown):
                continue
            answer = node.body if isinstance(test.ops[0], ast.In) else node.orelse
            if isinstance(test.ops[0], ast.NotIn) and not node.orelse:
                answer = statements[index + 1 :]
            if _answers_literal(answer[:3], truth=truth):
                return True
    return False


def _blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """``body`` and every statement list nested in it, not entering functions or classes."""
    yield body
    for node in scope_nodes(body, enter_classes=False):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                yield statements


def _answers_literal(statements: list[ast.stmt], *, truth: bool = False) -> bool:
    for statement in statements:
        if isinstance(statement, ast.Return) and statement.value is not None:
            value = statement.value
            if isinstance(value, ast.UnaryOp):
                value = value.operand
            if not isinstance(value, ast.Constant) or value.value is None:
                return False
            return truth or not isinstance(value.value, bool)
    return False


def _small_test(test: ast.AST, counters: set[str]) -> bool:
    """A count compared with a constant from 0 to 3, or used as a truth value."""
    for inner in ast.walk(test):
        if isinstance(inner, ast.Compare):
            sides = [inner.left, *inner.comparators]
            constants = [
                side.value
                for side in sides
                if isinstance(side, ast.Constant) and type(side.value) is int
            ]
            if constants and all(0 <= value <= 3 for value in constants):
                return True
        elif (
            isinstance(inner, ast.Name | ast.Subscript)
            and uses(inner, counters)
            and (test is inner or (isinstance(test, ast.UnaryOp) and test.operand is inner))
        ):
            return True
    return False


def uses(node: ast.AST, counters: set[str]) -> bool:
    return not counters.isdisjoint(mentions(node))


def _returns_value(statement: ast.stmt) -> bool:
    for node in scope_nodes([statement], enter_classes=False):
        if isinstance(node, ast.Return) and node.value is not None:
            constant_none = isinstance(node.value, ast.Constant) and node.value.value is None
            if not constant_none:
                return True
    return False
