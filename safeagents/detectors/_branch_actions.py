"""What a branch does with the answer (see :mod:`._evaluated_cases`): a literal or a table's
value returned or set to a returned name, or a returned name nudged by a constant; and the
same done on the way to a name the returned value is computed from (``pairs = pairs[:-1]``
before ``return sum(... for a, b in pairs)``; ``h, m, s = (1, 0, 0)`` before the parts of
the answer are joined; ``digits.pop()``): the computation changed for the input rather than
its result replaced. A name nudged on the way is cut by a fixed count at an end (``xs[:-1]``,
``xs[2:]``, ``del xs[-1]``, ``xs.pop()``); a cut to a length (``s[:50]``, a limit) is not a
nudge, nor is arithmetic on the way (``best += 1`` before ``return best % len(s)``)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from safeagents.detectors._branch_verdict import Action, Scope
from safeagents.detectors._safe_eval import Unknown

__all__ = ["answer_like", "branch_action", "feeding_names"]

_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "appendleft"})
_MAX_CUT = 3


def feeding_names(nodes: Iterable[ast.AST], returns: list[ast.Return]) -> frozenset[str]:
    """The names the returned values read, and, to a fixed point, the names read by what
    binds or fills them (assignments, loop targets, ``parts.append(...)``)."""
    feeding = {name for r in returns if r.value is not None for name in _names(r.value)}
    flows: list[tuple[set[str], set[str]]] = []
    for node in nodes:
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            flows.append(({n for t in targets for n in _names(t)}, _names(node.value)))
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            flows.append((_names(node.target), _names(node.iter)))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.attr in _MUTATORS
        ):
            flows.append(({node.func.value.id}, {n for a in node.args for n in _names(a)}))
    grown = True
    while grown:
        grown = False
        for stores, reads in flows:
            if stores & feeding and not reads <= feeding:
                feeding |= reads
                grown = True
    return frozenset(feeding)


def _names(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def branch_action(body: list[ast.stmt], scope: Scope) -> Action | None:
    """What the branch does with the answer, if it answers: a literal or a table value
    returned or set to a returned name, or a returned name nudged by a constant (in place, or
    returned nudged: ``return res - 3``); or, on the way, a literal set to a name the answer
    is computed from, or such a name cut by a fixed count."""
    for statement in body[:3]:
        if isinstance(statement, ast.Return) and statement.value is not None:
            value = statement.value
            if answer_like(value, scope):
                return "literal", value
            shifted = isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add | ast.Sub)
            left = value.left if shifted and isinstance(value, ast.BinOp) else None
            if (
                isinstance(left, ast.Name)
                and left.id in scope.returned
                and _nudge(left.id, value, scope)
            ):
                return "nudge", None
            return None
        action = _assigned(statement, scope) or _cut(statement, scope)
        if action is not None:
            return action
    return None


def _assigned(statement: ast.stmt, scope: Scope) -> Action | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0], statement.value
        if isinstance(target, ast.Name) and target.id in scope.returned:
            if answer_like(value, scope):
                return "literal", value
            if _nudge(target.id, value, scope):
                return "nudge", None
        elif isinstance(target, ast.Name) and target.id in scope.feeding:
            if answer_like(value, scope):
                return "literal", value
            if _cut_of(target.id, value):
                return "nudge", None
        elif (
            isinstance(target, ast.Tuple)
            and all(isinstance(e, ast.Name) for e in target.elts)
            and any(isinstance(e, ast.Name) and e.id in scope.feeding for e in target.elts)
            and answer_like(value, scope)
        ):
            return "literal", value
    if (
        isinstance(statement, ast.AugAssign)
        and isinstance(statement.target, ast.Name)
        and statement.target.id in scope.returned
        and _constant(statement.value, scope)
    ):
        return "nudge", None
    return None


def _cut(statement: ast.stmt, scope: Scope) -> Action | None:
    """``xs.pop()``, ``xs.pop(0)`` or ``del xs[-1]`` of a name the answer is computed from."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "pop"
            and isinstance(func.value, ast.Name)
            and func.value.id in scope.feeding
            and not call.keywords
            and all(isinstance(a, ast.Constant | ast.UnaryOp) for a in call.args)
        ):
            return "nudge", None
    if isinstance(statement, ast.Delete):
        for target in statement.targets:
            if (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and target.value.id in scope.feeding
                and _small_index(target.slice)
            ):
                return "nudge", None
    return None


def _cut_of(name: str, value: ast.expr) -> bool:
    """``xs[:-1]``, ``xs[1:]``, ``xs[1:-1]``: ``name`` less a fixed count at its ends."""
    if not (
        isinstance(value, ast.Subscript)
        and isinstance(value.value, ast.Name)
        and value.value.id == name
        and isinstance(value.slice, ast.Slice)
        and value.slice.step is None
    ):
        return False
    lower, upper = value.slice.lower, value.slice.upper
    if lower is None and upper is None:
        return False
    lower_ok = lower is None or (_small_index(lower) and _index(lower) > 0)
    upper_ok = upper is None or (_small_index(upper) and _index(upper) < 0)
    return lower_ok and upper_ok


def _index(node: ast.expr) -> int:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_index(node.operand)
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _small_index(node: ast.expr) -> bool:
    return 0 < abs(_index(node)) <= _MAX_CUT


def _nudge(name: str, value: ast.expr, scope: Scope) -> bool:
    """``ans = ans - 1``, ``ans = ans + OFFSET``: the name changed by a constant, also
    taken modulo one (``ans = (ans + 1) % MOD``)."""
    if (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Mod)
        and _constant(value.right, scope)
        and isinstance(value.left, ast.BinOp)
    ):
        value = value.left
    return (
        isinstance(value, ast.BinOp)
        and isinstance(value.left, ast.Name)
        and value.left.id == name
        and _constant(value.right, scope)
    )


def _constant(node: ast.expr, scope: Scope) -> bool:
    """A literal, or a module-level name bound to a number (``_WRAP_ADJ = 1``)."""
    if isinstance(node, ast.Constant):
        return True
    if not isinstance(node, ast.Name):
        return False
    value = scope.constants.get(node.id)
    return isinstance(value, int | float) and not isinstance(value, bool)


def answer_like(node: ast.expr, scope: Scope) -> bool:
    """A literal (``15``, ``[1, 2]``), a module table's value (``_KNOWN[s]``), or a choice
    between such (``(1, 0, 0) if x >= 3599.5 else (0, 1, 0)``)."""
    if isinstance(node, ast.IfExp):
        return answer_like(node.body, scope) and answer_like(node.orelse, scope)
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Name) and isinstance(
            scope.constants.get(node.value.id), dict | list | tuple
        )
    try:
        scope.value(node, {})
    except Unknown:
        return False
    return not isinstance(node, ast.Name)
