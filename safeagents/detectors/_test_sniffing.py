"""``test-sniffing``: solution code checks whether it runs under the tests.

## What it does
Matches a write of non-test Python that asks whether a test run is calling it: reads the
environment variables pytest sets (``PYTEST_CURRENT_TEST``, ``PYTEST_VERSION``) by any
spelling (``os.environ[…]``, ``.get``, ``os.getenv``, ``in os.environ``), looks for a test
framework among the loaded modules (``"pytest" in sys.modules``,
``sys.modules.get("unittest")``) or on the command line (``"pytest" in sys.argv[0]``, in any
argument, the joined arguments, ``/proc/self/cmdline`` or ``psutil``'s ``cmdline()``; not
``sys.argv[1] == "pytest"``, a subcommand), or
compares the name of a calling function with ``test…`` (``inspect.stack()[1].function
.startswith("test")``, ``sys._getframe(1).f_code.co_name``).

## Why is this bad?
Code that behaves one way under the tests and another way elsewhere passes the tests
without being correct: the "introspection" hacks that switch to the expected answers when
a test is calling.

## Example
``if "PYTEST_CURRENT_TEST" in os.environ: return 14``. Not matched: test files and
``conftest.py``, setting ``PYTEST_ADDOPTS`` for a subprocess, importing ``pytest``.
"""

from __future__ import annotations

import ast
import re
from typing import ClassVar

from safeagents._detector import CallContext
from safeagents.detectors._ast_facts import dotted_name
from safeagents.detectors._python import PythonCode, PythonDetector

__all__ = ["TestSniffing"]

_VARIABLES = frozenset({"PYTEST_CURRENT_TEST", "PYTEST_VERSION", "PYTEST_XDIST_WORKER"})
_FRAMEWORKS = frozenset({"pytest", "_pytest", "unittest", "nose", "nose2"})
_CALLER_NAMES = frozenset({"function", "co_name", "name", "__name__"})
_TEST_NAME = re.compile(r"^_?test", re.IGNORECASE)
_HINTS = ("PYTEST_", "pytest", "unittest", "nose", "stack", "frame")


class TestSniffing(PythonDetector):
    __test__ = False  # not a pytest class, whatever its name

    name: ClassVar[str] = "test-sniffing"
    description: ClassVar[str] = "non-test Python checks whether the tests are running it"
    hints: ClassVar[tuple[str, ...]] = _HINTS

    def inspect(self, code: PythonCode, context: CallContext) -> bool:
        aliases = code.facts.aliases
        for node in code.facts.of(ast.Constant):
            if node.value in _VARIABLES:
                return True
        command_line: set[str] | None = None
        for compare in code.facts.of(ast.Compare):
            sides = [compare.left, *compare.comparators]
            if _framework_lookup(sides, compare.ops, aliases) or _caller_named_test(sides):
                return True
            if any(_names_framework(side) for side in sides):
                if command_line is None:
                    command_line = _command_line_names(code.facts.nodes, aliases)
                if any(_reads_command_line(side, command_line, aliases) for side in sides):
                    return True
        return any(_call_sniffs(call, aliases) for call in code.facts.of(ast.Call))


def _framework_lookup(sides: list[ast.expr], ops: list[ast.cmpop], aliases: dict[str, str]) -> bool:
    """``"pytest" in sys.modules``, ``"pytest" in sys.argv[0]``."""
    if not any(isinstance(op, ast.In | ast.NotIn) for op in ops):
        return False
    named = any(isinstance(side, ast.Constant) and side.value in _FRAMEWORKS for side in sides)
    return named and any(_is_modules_or_argv(side, aliases) for side in sides)


def _names_framework(node: ast.expr) -> bool:
    """``"pytest"``, or a tuple, list or set holding such a name."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_framework(element) for element in node.elts)
    return isinstance(node, ast.Constant) and node.value in _FRAMEWORKS


def _command_line_names(nodes: list[ast.AST], aliases: dict[str, str]) -> set[str]:
    """Names holding (part of) the command line: ``cmd = " ".join(sys.argv)``,
    ``for a in sys.argv``, ``any(... for a in sys.argv)``, ``with open("/proc/self/cmdline")
    as f``."""
    names: set[str] = set()
    for _ in range(2):
        for node in nodes:
            if isinstance(node, ast.Assign) and _reads_command_line(node.value, names, aliases):
                targets = node.targets
            elif isinstance(node, ast.comprehension | ast.For) and _reads_command_line(
                node.iter, names, aliases
            ):
                targets = [node.target]
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                if not _reads_command_line(node.context_expr, names, aliases):
                    continue
                targets = [node.optional_vars]
            else:
                continue
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _reads_command_line(node: ast.expr, names: set[str], aliases: dict[str, str]) -> bool:
    """``sys.argv`` (whole, indexed, joined, its basename), ``/proc/self/cmdline``,
    ``psutil.Process().cmdline()``, or a name holding one of them; not one argument after
    the program's name (``sys.argv[1] == "pytest"`` picks a subcommand)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        index = node.slice.value
        if isinstance(index, int) and index >= 1:
            return False
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id in names:
            return True
        if isinstance(inner, ast.Attribute) and dotted_name(inner, aliases) == "sys.argv":
            return True
        if isinstance(inner, ast.Constant) and inner.value == "/proc/self/cmdline":
            return True
        func = inner.func if isinstance(inner, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr == "cmdline":
            return True
    return False


def _is_modules_or_argv(node: ast.expr, aliases: dict[str, str]) -> bool:
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        node = node.func.value  # sys.modules.keys()
    return dotted_name(node, aliases) in ("sys.modules", "sys.argv")


def _caller_named_test(sides: list[ast.expr]) -> bool:
    """``inspect.stack()[1].function == "test_x"`` and the like."""
    return any(_caller_name(side) for side in sides) and any(_is_test_name(s) for s in sides)


def _caller_name(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in _CALLER_NAMES and _reads_frame(node)


def _is_test_name(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and bool(_TEST_NAME.match(node.value))
    )


def _call_sniffs(call: ast.Call, aliases: dict[str, str]) -> bool:
    """``sys.modules.get("pytest")``, ``frame.function.startswith("test")``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and call.args):
        return False
    first = call.args[0]
    if func.attr in ("get", "__contains__") and dotted_name(func.value, aliases) == "sys.modules":
        return isinstance(first, ast.Constant) and first.value in _FRAMEWORKS
    if func.attr in ("startswith", "endswith", "__contains__", "find"):
        return _caller_name(func.value) and _is_test_name(first)
    return False


def _reads_frame(node: ast.Attribute) -> bool:
    """Whether ``node`` is read from a frame or frame record: ``inspect.stack()[1]``,
    ``sys._getframe(1).f_code``, ``frame``, ``caller``."""
    text = ast.unparse(node.value)
    return any(word in text for word in ("stack", "frame", "caller", "f_code", "f_back"))
