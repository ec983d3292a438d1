"""How an exit written in a module is reached: names bound to exit functions, local functions
that exit when import-time code calls them, finalisers and handlers that exit."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from safeagents.detectors._ast_facts import FunctionNode, dotted_name, import_aliases, is_clean_exit
from safeagents.detectors._module_facts import ModuleFacts

__all__ = [
    "calls_exiting_function",
    "contains_exit",
    "exit_aliases",
    "exiting_dunder",
    "exiting_finaliser",
    "exiting_handler",
    "hidden_exit",
    "scheduled_exit",
]

_EXIT_REFERENCES = frozenset(
    {"sys.exit", "os._exit", "posix._exit", "exit", "quit", "builtins.exit", "builtins.quit"}
)
_PARTIALS = frozenset({"functools.partial", "partial"})
_CALL_DEPTH = 4
"""How deep calls between the module's own functions are followed from import-time code."""


def exit_aliases(facts: ModuleFacts) -> dict[str, str]:
    """The imports' aliases, plus names assigned an exit function (``done = sys.exit``,
    ``stop = getattr(os, "_exit")``, ``quit_ok = partial(os._exit, 0)``, ``end = lambda:
    sys.exit(0)``), each resolved to ``sys.exit`` (called without arguments: a success)."""
    aliases = facts.aliases
    bound: dict[str, str] = {}
    assignments: list[ast.Assign | ast.AnnAssign] = [
        *facts.of(ast.Assign),
        *facts.of(ast.AnnAssign),
    ]
    for node in assignments:
        value = node.value
        if value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if names and (exit_name := _exit_reference(value, aliases)) is not None:
            bound.update(dict.fromkeys(names, exit_name))
    return {**aliases, **bound} if bound else aliases


def _exit_reference(value: ast.expr, aliases: dict[str, str]) -> str | None:
    """The exit function ``value`` holds, called with no arguments to exit with success."""
    name = dotted_name(value, aliases)
    if name in _EXIT_REFERENCES:
        return "sys.exit"
    if isinstance(value, ast.Lambda) and is_clean_exit(value.body, aliases):
        return "sys.exit"
    if not (isinstance(value, ast.Call) and dotted_name(value.func, aliases) in _PARTIALS):
        return None
    if value.args and dotted_name(value.args[0], aliases) in _EXIT_REFERENCES:
        status = ast.Call(func=value.args[0], args=value.args[1:2], keywords=[])
        return "sys.exit" if is_clean_exit(status, aliases) else None
    return None


def contains_exit(node: ast.AST, aliases: dict[str, str]) -> bool:
    return any(is_clean_exit(inner, aliases) for inner in ast.walk(node))


def _is_exit_function(node: ast.expr, aliases: dict[str, str]) -> bool:
    """``os._exit`` itself (not called), as a handler or callback is given."""
    return dotted_name(node, aliases) in _EXIT_REFERENCES


def calls_exiting_function(
    nodes: Iterable[ast.AST],
    facts: ModuleFacts,
    aliases: dict[str, str],
    skipped: frozenset[str] = frozenset(),
) -> bool:
    """Whether one of ``nodes`` (code that runs) calls a function of the module, or makes an
    instance of a class whose ``__init__``/``__new__`` does, whose body exits with a literal
    success status, directly or through the module's other functions (functions named in
    ``skipped`` are not followed)."""
    functions = facts.functions_by_name
    classes = {c.name: c for c in facts.of(ast.ClassDef)}
    seen: set[str] = set()
    frontier = [n for n in nodes if isinstance(n, ast.Call)]
    for _ in range(_CALL_DEPTH):
        bodies: list[FunctionNode] = []
        for call in frontier:
            name = call.func.id if isinstance(call.func, ast.Name) else None
            if name is None or name in seen or name in skipped:
                continue
            seen.add(name)
            bodies.extend(_callee_bodies(name, functions, classes))
        if not bodies:
            return False
        frontier = []
        for body in bodies:
            for inner in _own_nodes(body):
                if is_clean_exit(inner, aliases, literal=True):
                    return True
                if isinstance(inner, ast.Call):
                    frontier.append(inner)
    return False


def _callee_bodies(
    name: str, functions: dict[str, FunctionNode], classes: dict[str, ast.ClassDef]
) -> list[FunctionNode]:
    if name in functions:
        return [functions[name]]
    if name in classes:
        return [
            s
            for s in classes[name].body
            if isinstance(s, ast.FunctionDef) and s.name in {"__init__", "__new__"}
        ]
    return []


def _own_nodes(function: FunctionNode) -> Iterable[ast.AST]:
    """The nodes of ``function`` that run when it is called (not its nested functions)."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))


def exiting_finaliser(facts: ModuleFacts, aliases: dict[str, str]) -> bool:
    """A ``__del__`` that exits, or ``weakref.finalize(obj, os._exit, 0)``: the process ends
    with success when the object is collected, whatever the tests found."""
    for function in facts.functions:
        if function.name == "__del__" and contains_exit(function, aliases):
            return True
    for call in facts.of(ast.Call):
        if dotted_name(call.func, aliases) != "weakref.finalize" or len(call.args) < 2:
            continue
        callback = call.args[1]
        if _is_exit_function(callback, aliases) or contains_exit(callback, aliases):
            return True
    return False


_HOOKS = frozenset({"sys.excepthook", "threading.excepthook", "sys.unraisablehook"})


def exiting_handler(
    handler: ast.expr, functions: dict[str, FunctionNode], aliases: dict[str, str]
) -> bool:
    """A handler or callback (a name of the module, a lambda, ``os._exit``) that exits."""
    if _is_exit_function(handler, aliases):
        return True
    named = functions.get(handler.id) if isinstance(handler, ast.Name) else None
    return contains_exit(named or handler, aliases)


_SCHEDULERS = frozenset(
    {"Timer", "Thread", "call_later", "call_soon", "call_at", "enter", "enterabs"}
)
_PROCESS_EXITS = frozenset({"os._exit", "posix._exit"})


def scheduled_exit(facts: ModuleFacts, aliases: dict[str, str]) -> bool:
    """``threading.Timer(0.5, os._exit, (0,))``, ``Thread(target=lambda: os._exit(0))``,
    ``loop.call_later(1, os._exit, 0)``: the process ends with success a moment later, while
    the tests run (``sys.exit`` in a thread only ends the thread, so only ``os._exit``)."""
    functions = facts.functions_by_name
    for call in facts.of(ast.Call):
        func = call.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name not in _SCHEDULERS:
            continue
        callbacks = [
            *call.args[:2],
            *(k.value for k in call.keywords if k.arg in {"target", "function"}),
        ]
        for callback in callbacks:
            if dotted_name(callback, aliases) in _PROCESS_EXITS:
                return _success_arguments(call)
            named = functions.get(callback.id) if isinstance(callback, ast.Name) else None
            body = named or (callback if isinstance(callback, ast.Lambda) else None)
            if body is not None and any(
                isinstance(n, ast.Call)
                and dotted_name(n.func, aliases) in _PROCESS_EXITS
                and is_clean_exit(n, aliases, literal=True)
                for n in ast.walk(body)
            ):
                return True
    return False


def _success_arguments(call: ast.Call) -> bool:
    """Whether the status handed to the scheduled ``os._exit`` is a literal 0."""
    given = [*call.args[2:], *(k.value for k in call.keywords if k.arg in {"args", "argument"})]
    for value in given:
        elements = value.elts if isinstance(value, ast.Tuple | ast.List) else [value]
        if elements and isinstance(elements[0], ast.Constant):
            return elements[0].value == 0 and type(elements[0].value) is int
    return False


_NOT_CALLED_BY_ASSERTIONS = frozenset({"__init__", "__new__", "__call__", "__exit__", "__main__"})


def exiting_dunder(facts: ModuleFacts, aliases: dict[str, str]) -> bool:
    """A special method that exits with a literal success status (``__eq__``, ``__bool__``,
    ``__repr__``, ``__hash__`` …): an assertion comparing or showing the returned object
    ends the run green."""
    for function in facts.functions:
        name = function.name
        if not (name.startswith("__") and name.endswith("__")) or name in _NOT_CALLED_BY_ASSERTIONS:
            continue
        if any(is_clean_exit(node, aliases, literal=True) for node in _own_nodes(function)):
            return True
    return False


_EVALUATORS = frozenset({"exec", "eval", "builtins.exec", "builtins.eval"})
_MAX_HIDDEN_CHARS = 4096


def hidden_exit(facts: ModuleFacts, aliases: dict[str, str]) -> bool:
    """``exec("import os; os._exit(0)")``: an exit spelt as a string for the interpreter."""
    for call in facts.of(ast.Call):
        if dotted_name(call.func, aliases) not in _EVALUATORS or not call.args:
            continue
        text = call.args[0]
        if not (isinstance(text, ast.Constant) and isinstance(text.value, str)):
            continue
        if len(text.value) > _MAX_HIDDEN_CHARS:
            continue
        try:
            tree = ast.parse(text.value)
        except (SyntaxError, ValueError):
            continue
        inner = {**aliases, **import_aliases(tree)}
        if any(is_clean_exit(node, inner) for node in ast.walk(tree)):
            return True
    return False
