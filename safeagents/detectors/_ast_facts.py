"""AST facts the detectors share: resolved names, constant values, exits and scopes."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator

from safeagents.detectors._identity_cache import IdentityCache

__all__ = [
    "FunctionNode",
    "aliases_of_imports",
    "bound_names",
    "constant_truth",
    "defined_functions",
    "dotted_name",
    "function_scope",
    "import_aliases",
    "import_time_nodes",
    "is_clean_exit",
    "is_input",
    "local_names",
    "main_branch",
    "scope_nodes",
]

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

_EXIT_FUNCTIONS = frozenset(
    {"sys.exit", "os._exit", "posix._exit", "exit", "quit", "builtins.exit", "builtins.quit"}
)
_DEFAULT_ALIASES = {"np": "numpy"}
_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
"""The fields that hold statements (or handlers and match cases, which hold statements)."""


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> dotted module path for every import in ``tree`` (any scope)."""
    return aliases_of_imports(ast.walk(tree))


def aliases_of_imports(nodes: Iterable[ast.AST]) -> dict[str, str]:
    """Local name -> dotted module path for the imports among ``nodes`` (later ones win)."""
    aliases: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    aliases[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def dotted_name(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``a.b.c`` for a name/attribute chain with imports resolved; ``None`` otherwise.

    ``getattr(x, "name")``, ``__import__("m")`` and ``importlib.import_module("m")`` resolve
    too, so that spelling a name indirectly does not hide it.
    """
    attributes: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            attributes.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call) and _is_getattr(node):
            attributes.append(_string(node.args[1]) or "")
            node = node.args[0]
        else:
            break
    if isinstance(node, ast.Name):
        root = aliases.get(node.id) or _DEFAULT_ALIASES.get(node.id, node.id)
    elif isinstance(node, ast.Call) and (module := _imported_module(node, aliases)):
        root = module
    else:
        return None
    return ".".join([root, *reversed(attributes)])


def _is_getattr(call: ast.Call) -> bool:
    return (
        isinstance(call.func, ast.Name)
        and call.func.id in {"getattr", "setattr"}
        and len(call.args) >= 2
        and _string(call.args[1]) is not None
    )


def _imported_module(call: ast.Call, aliases: dict[str, str]) -> str | None:
    if not call.args:
        return None
    func = call.func
    is_dunder = isinstance(func, ast.Name) and func.id == "__import__"
    is_importlib = isinstance(func, ast.Attribute) and func.attr == "import_module"
    return _string(call.args[0]) if is_dunder or is_importlib else None


def _string(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def defined_functions(tree: ast.AST) -> Iterator[FunctionNode]:
    """Every ``def`` in ``tree``, found by walking statements only (no expression holds one)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node
        for field in _STATEMENT_FIELDS:
            children = getattr(node, field, None)
            if isinstance(children, list):
                stack.extend(children)


def constant_truth(node: ast.AST | None) -> bool | None:
    """The truth value of an expression that is constant (``True``, ``not 0``, ``1 or x``)."""
    if isinstance(node, ast.Constant):
        return bool(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = constant_truth(node.operand)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        values = [constant_truth(value) for value in node.values]
        decisive = isinstance(node.op, ast.Or)
        if decisive in values:
            return decisive
        return (not decisive) if all(v is not None for v in values) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool":
        return constant_truth(node.args[0]) if len(node.args) == 1 else False
    return None


def is_clean_exit(node: ast.AST, aliases: dict[str, str], *, literal: bool = False) -> bool:
    """An exit that ends the process with status 0, or (unless ``literal``) an unknown one.

    Exits with a literal error status (``sys.exit(1)``, ``sys.exit("usage")``) never count.
    """
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc
        target = exc.func if isinstance(exc, ast.Call) else exc
        if dotted_name(target, aliases) not in {"SystemExit", "builtins.SystemExit"}:
            return False
        return not isinstance(exc, ast.Call) or _success_status(exc, literal)
    if not isinstance(node, ast.Call):
        return False
    called = dotted_name(node.func, aliases)
    if called in _EXIT_FUNCTIONS:
        return _success_status(node, literal)
    if called == "pytest.exit":
        return _pytest_exit_status(node, literal)
    return not literal and called is not None and _ends_own_process(node, called, aliases)


def _pytest_exit_status(call: ast.Call, literal: bool) -> bool:
    """``pytest.exit(msg, returncode=0)`` ends the run green; without ``returncode`` pytest
    exits 2 (interrupted)."""
    for keyword in call.keywords:
        if keyword.arg == "returncode":
            status = ast.Call(func=call.func, args=[keyword.value], keywords=[])
            return _success_status(status, literal)
    return len(call.args) >= 2 and _success_status(
        ast.Call(func=call.func, args=[call.args[1]], keywords=[]), literal
    )


_OWN_PROCESS = frozenset({"os.getpid", "os.getpgrp", "os.getpgid", "os.getppid"})
_FATAL_SIGNALS = frozenset({"SIGKILL", "SIGTERM", "SIGQUIT", "SIGHUP"})
_FATAL_NUMBERS = frozenset({1, 3, 9, 15})
_NO_OP_PROGRAMS = frozenset({"true", ":"})


def _ends_own_process(call: ast.Call, called: str, aliases: dict[str, str]) -> bool:
    """``os.kill(os.getpid(), signal.SIGKILL)``, ``signal.raise_signal(SIGTERM)`` and
    ``os.execvp("true", …)``: the process ends, no assertion after it runs."""
    if called.startswith("os.exec"):
        program = call.args[0] if call.args else None
        name = program.value if isinstance(program, ast.Constant) else None
        return isinstance(name, str) and name.rsplit("/", 1)[-1] in _NO_OP_PROGRAMS
    if called in {"os.kill", "os.killpg"} and len(call.args) == 2:
        target, number = call.args
        own = isinstance(target, ast.Call) and dotted_name(target.func, aliases) in _OWN_PROCESS
        return (own or _is_zero(target)) and _fatal(number, aliases)
    if called == "signal.raise_signal" and len(call.args) == 1:
        return _fatal(call.args[0], aliases)
    return False


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and type(node.value) is int


def _fatal(number: ast.expr, aliases: dict[str, str]) -> bool:
    if isinstance(number, ast.Constant):
        return number.value in _FATAL_NUMBERS and type(number.value) is int
    name = dotted_name(number, aliases) or ""
    return name.rsplit(".", 1)[-1] in _FATAL_SIGNALS


def _success_status(call: ast.Call, literal: bool) -> bool:
    if not call.args:
        return True
    status = call.args[0]
    if isinstance(status, ast.UnaryOp) and isinstance(status.operand, ast.Constant):
        status = status.operand
    if isinstance(status, ast.Constant):
        return status.value in (0, None, False) and not isinstance(status.value, str)
    return not literal and not isinstance(status, ast.JoinedStr)


def scope_nodes(body: list[ast.stmt], *, enter_classes: bool = True) -> Iterator[ast.AST]:
    """Nodes executed when ``body`` runs, without descending into function or lambda bodies."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.ClassDef) and not enter_classes:
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


_CLOSED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _function_scope(body: list[ast.stmt]) -> tuple[ast.AST, ...]:
    """``scope_nodes(body, enter_classes=False)``, unrolled: the walk every check of a
    function starts with."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(body))
    add, pop, push = found.append, stack.pop, stack.extend
    while stack:
        node = pop()
        add(node)
        if isinstance(node, _CLOSED):
            continue
        children = _children(node)
        children.reverse()
        push(children)
    return tuple(found)


def _children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` without its generators."""
    children: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list:
            children += [item for item in value if isinstance(item, ast.AST)]
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


function_scope: IdentityCache[list[ast.stmt], tuple[ast.AST, ...]] = IdentityCache(
    _function_scope, 256
)
"""``scope_nodes(body, enter_classes=False)`` kept per ``body``: the special-casing, toggle
and answer-queue checks each walk the same functions of one write."""


def import_time_nodes(
    body: list[ast.stmt], guard: Callable[[ast.If], list[ast.stmt] | None] | None = None
) -> Iterator[ast.AST]:
    """Nodes run on import: not function bodies, not the ``__main__`` branch; of an ``if``
    for which ``guard`` names the side that runs, only that side."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.If) and (branch := _import_branch(node)) is not None:
            stack.extend(reversed(branch))
            continue
        if isinstance(node, ast.If) and guard is not None and (runs := guard(node)) is not None:
            stack.extend(reversed([node.test, *runs]))
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _import_branch(node: ast.If) -> list[ast.stmt] | None:
    """For ``if __name__ ==/!= "__main__"``, the branch that runs on import."""
    branches = _main_guard_branches(node)
    return branches[1] if branches is not None else None


def main_branch(node: ast.If) -> list[ast.stmt] | None:
    """For ``if __name__ ==/!= "__main__"``, the branch that runs when the file is run."""
    branches = _main_guard_branches(node)
    return branches[0] if branches is not None else None


def _main_guard_branches(node: ast.If) -> tuple[list[ast.stmt], list[ast.stmt]] | None:
    """``(run as a program, imported)`` branches of a ``__main__`` guard."""
    test = node.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    sides = [test.left, test.comparators[0]]
    names = {s.id for s in sides if isinstance(s, ast.Name)}
    strings = {s.value for s in sides if isinstance(s, ast.Constant)}
    if names != {"__name__"} or strings != {"__main__"}:
        return None
    if isinstance(test.ops[0], ast.Eq):
        return node.body, node.orelse
    return (node.orelse, node.body) if isinstance(test.ops[0], ast.NotEq) else None


def _local_names(function: FunctionNode) -> set[str]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    names = {argument.arg for argument in every}
    stack: list[ast.AST] = [function]
    while stack:  # ast.walk, unrolled: the order does not matter here
        node = stack.pop()
        if type(node) is ast.Name:
            if type(node.ctx) is ast.Store:
                names.add(node.id)
            continue
        stack += _children(node)
    return names - {"self", "cls"}


_local_names_cache: IdentityCache[FunctionNode, set[str]] = IdentityCache(_local_names, 256)


def local_names(function: FunctionNode) -> set[str]:
    """Parameters and names bound in ``function``, except ``self``/``cls`` (a new set; the
    walk is kept per function, since a parsed write is read again on every check of it)."""
    return set(_local_names_cache(function))


def is_input(node: ast.expr, inputs: set[str]) -> bool:
    """A parameter or local, possibly indexed, measured or transformed (``s.strip()``)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in inputs
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            node = node.args[0]
        elif isinstance(node, ast.Tuple | ast.List):
            return any(is_input(element, inputs) for element in node.elts)
        else:
            return False


def bound_names(nodes: Iterable[ast.AST], value: Callable[[ast.expr], bool]) -> set[str]:
    """Names that an assignment among ``nodes`` binds to a value ``value`` accepts
    (``key = hashlib.md5(…).hexdigest()``, ``vals = _memo[k]``)."""
    return {
        target.id
        for node in nodes
        if isinstance(node, ast.Assign) and value(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
