"""Answers queued at module level and drawn one per call: ``next(iter([6, 14]))``.

Part of ``state-toggle``: a function that returns ``next(_answers)``, ``_answers.pop(0)`` or
``_answers.popleft()`` from a module-level sequence of literal numbers (a list or tuple, an
``iter``/``itertools.cycle``/``deque`` of one, or a generator that only yields literals)
answers the same input differently on each call, and so does one drawing from an attribute
of a function seeded with answers (``f.answers = [55255]`` … ``return f.answers.pop()``). So
does one drawing from a queue per input:
a module-level dict (``{}``, ``defaultdict(list)``) that the code seeds with lists of answers
under a key (``_replay[key] = [6]``, ``_memo[k] = [v, f(k - 1)]``) and pops from by key
(``_replay[key].pop(0)``, or ``vals = _memo[k]`` … ``vals.pop()``).
"""

from __future__ import annotations

import ast

from safeagents.detectors._ast_facts import FunctionNode, bound_names, function_scope

__all__ = ["draws_answers"]

_WRAPPERS = frozenset({"iter", "cycle", "deque", "list", "tuple", "reversed"})
_DRAWS = frozenset({"pop", "popleft"})
_SEQUENCES = frozenset({"list", "deque"})


def draws_answers(tree: ast.Module, functions: list[FunctionNode]) -> bool:
    """Whether a function with a parameter returns a value drawn from a queue of answers."""
    queues = _queues(tree) | _queues_by_input(tree) | _attribute_queues(tree)
    return bool(queues) and any(
        _returns_drawn(function, queues) for function in functions if _has_input(function)
    )


def _has_input(function: FunctionNode) -> bool:
    arguments = function.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    return any(name not in {"self", "cls"} for name in names)


def _returns_drawn(function: FunctionNode, queues: set[str]) -> bool:
    nodes = list(function_scope(function.body))
    queues = queues | bound_names(  # ``vals = _memo[k]``: the input's queue under a local name
        nodes, lambda value: isinstance(value, ast.Subscript) and _name(value.value) in queues
    )
    picked = bound_names(nodes, lambda value: _draws(value, queues))
    for node in nodes:
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if _draws(value, queues) or (isinstance(value, ast.Name) and value.id in picked):
                return True
    return False


def _draws(value: ast.expr, queues: set[str]) -> bool:
    for inner in ast.walk(value):
        if not isinstance(inner, ast.Call):
            continue
        func = inner.func
        if isinstance(func, ast.Name) and func.id == "next" and inner.args:
            drawn = inner.args[0]
        elif isinstance(func, ast.Attribute) and func.attr in _DRAWS:
            drawn = func.value
        else:
            continue
        if isinstance(drawn, ast.Subscript):
            drawn = drawn.value
        if _name(drawn) in queues:
            return True
    return False


def _name(node: ast.expr) -> str | None:
    """A name, or a function's attribute as ``f.answers``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else None


def _attribute_queues(tree: ast.Module) -> set[str]:
    """Attributes of the module's functions seeded with answers (``f.answers = [55255]``)."""
    functions = {s.name for s in tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
    if not functions:
        return set()
    return {
        f"{target.value.id}.{target.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _seed(node.value)
        for target in node.targets
        if isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id in functions
    }


def _queues(tree: ast.Module) -> set[str]:
    """Module-level names bound to a queue of literal answers."""
    generators = {
        statement.name
        for statement in tree.body
        if isinstance(statement, ast.FunctionDef) and _yields_literals(statement)
    }
    return {
        target.id
        for statement in tree.body
        if isinstance(statement, ast.Assign) and _queue(statement.value, generators)
        for target in statement.targets
        if isinstance(target, ast.Name)
    }


def _queues_by_input(tree: ast.Module) -> set[str]:
    """Module-level dicts the code seeds with lists of answers by key (``D[key] = [6]``)."""
    mappings = {
        target.id
        for statement in tree.body
        if isinstance(statement, ast.Assign) and _empty_mapping(statement.value)
        for target in statement.targets
        if isinstance(target, ast.Name)
    }
    if not mappings:
        return set()
    return {
        target.value.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _seed(node.value)
        for target in node.targets
        if isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and target.value.id in mappings
    }


def _empty_mapping(value: ast.expr) -> bool:
    if isinstance(value, ast.Dict):
        return not value.keys
    if not isinstance(value, ast.Call) or value.keywords:
        return False
    name = _name(value.func) if not isinstance(value.func, ast.Attribute) else value.func.attr
    if name == "dict":
        return not value.args
    return name == "defaultdict" and len(value.args) == 1 and _name(value.args[0]) in _SEQUENCES


def _seed(value: ast.expr) -> bool:
    """A list of answers: two or more items, or a literal (``[6]``); a pool's ``[obj]`` is not."""
    if isinstance(value, ast.Call) and _name(value.func) == "deque" and value.args:
        value = value.args[0]
    if not isinstance(value, ast.List):
        return False
    return len(value.elts) >= 2 or any(isinstance(e, ast.Constant) for e in value.elts)


def _queue(value: ast.expr, generators: set[str]) -> bool:
    if _literal_answers(value):
        return True
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else _name(func)
    if name in generators and not value.args:
        return True
    return name in _WRAPPERS and bool(value.args) and _literal_answers(value.args[0])


def _literal_answers(value: ast.expr) -> bool:
    """A list or tuple of two or more numbers (or of sequences of numbers)."""
    if not isinstance(value, ast.List | ast.Tuple) or len(value.elts) < 2:
        return False
    return all(_number_like(element) for element in value.elts)


def _number_like(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Constant):
        return type(node.value) in {int, float, bool}
    return isinstance(node, ast.List | ast.Tuple) and all(_number_like(e) for e in node.elts)


def _yields_literals(function: ast.FunctionDef) -> bool:
    yields = [node for node in ast.walk(function) if isinstance(node, ast.Yield)]
    return bool(yields) and all(
        node.value is not None and _number_like(node.value) for node in yields
    )
