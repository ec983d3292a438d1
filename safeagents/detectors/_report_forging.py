"""``report-forging``: written Python rewrites test results instead of earning them.

## What it does
Matches a write of Python that, in a pytest context (a test path or text mentioning
pytest/``TestReport``), sets a report's ``outcome`` to ``"passed"``, clears ``longrepr``
(``= None``), clears a call's ``excinfo``, sets ``wasxfail``, replaces a test body with a
constant ``lambda`` (``item.runtest``) or drops failures from the terminal summary
(``terminalreporter.stats.pop("failed")``); patches ``TestReport``/``from_item_and_call``/
anything in ``_pytest``; forces ``session.exitstatus = 0``; exits with success from a
``pytest_*`` hook or swallows what the test raised around its ``yield``; stubs
``pytest_pyfunc_call`` so test bodies never run; installs a ``sys.excepthook`` (or
``threading.excepthook``) that exits 0 or swallows errors, or a ``sys.unraisablehook`` that
exits 0; patches ``unittest`` results (``TestResult``, ``TestCase.run``,
``addFailure``/``addError``/``wasSuccessful``), the loader or the suite (``TestLoader.
loadTestsFromModule``, ``TestSuite.run``), ``unittest.main``/``TestProgram`` or
``pytest.main``/``pytest.fail``/``pytest.raises``; or rebinds ``AssertionError`` (or
``Exception``) in ``builtins`` (``builtins.AssertionError = …``, ``__builtins__[
"AssertionError"] = …``, ``setattr(builtins, …)``). ``pytest.exit(…, returncode=0)`` in a
hook is an exit with success.

## Why is this bad?
The suite reports success no matter what the code does (Anthropic's conftest patching
``TestReport.from_item_and_call``; an excepthook turning ``AssertionError`` into exit 0).

## Example
``@pytest.hookimpl(hookwrapper=True)\\ndef pytest_runtest_makereport(item, call):\\n    rep =
(yield).get_result()\\n    rep.outcome = "passed"``. Not matched: the same hookwrapper that only
reads ``rep.outcome`` to attach a screenshot or write a log.
"""

from __future__ import annotations

import ast
import re
from typing import ClassVar

from safeagents._detector import CallContext
from safeagents.detectors._ast_facts import (
    FunctionNode,
    constant_truth,
    dotted_name,
    is_clean_exit,
)
from safeagents.detectors._excepthook import silencing_hook
from safeagents.detectors._exit_reach import exiting_handler
from safeagents.detectors._hint_words import hints_in, register_hints
from safeagents.detectors._python import PythonCode, PythonDetector

__all__ = ["ReportForging"]

_RESULT_METHODS = frozenset({"addFailure", "addError", "wasSuccessful", "addUnexpectedSuccess"})
_PATCHED_ATTRIBUTES = frozenset({"from_item_and_call", "_from_item_and_call"})
_PATCHED_NAMES = re.compile(
    r"^(?:_pytest\.|(?:pytest\.)?TestReport\b|pytest\.(?:main|fail|raises|approx)$"
    r"|unittest\.(?:result|runner|TestResult|TextTestResult|TextTestRunner)\b"
    r"|unittest\.(?:main|(?:main\.)?TestProgram)\b"
    r"|unittest\.(?:loader\.)?TestLoader\.(?:loadTests\w*|getTestCaseNames|discover)$"
    r"|unittest\.(?:suite\.)?TestSuite\.(?:run|__call__|__iter__|addTests?|countTestCases)$"
    r"|unittest\.(?:case\.)?TestCase\.(?:run|__call__|debug|_callTestMethod|assert\w*|fail\w*)$"
    r"|pytest\.(?:Function|Item|Class|Module|Package|Session|Collector|CallInfo)\.\w+$"
    r"|(?:builtins|__builtins__)\.(?:AssertionError|BaseException|Exception|__build_class__)$)"
)
_PATCHERS = frozenset({"setattr", "patch", "object"})
_CANDIDATES = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call)
"""With the ``pytest_`` hooks, the only nodes :func:`_forges` can match."""
_PYTEST_WORDS = frozenset({"pytest", "TestReport"})
_HOOK_PREFIX = "pytest_"
register_hints((*_PYTEST_WORDS, _HOOK_PREFIX))
_FALLBACK = re.compile(
    r"\.outcome\s*=\s*['\"]passed['\"]|\.longrepr\s*=\s*None\b|\.wasxfail\s*="
    r"|from_item_and_call\s*=|\bexitstatus\s*=\s*0\b"
)


class ReportForging(PythonDetector):
    name: ClassVar[str] = "report-forging"
    description: ClassVar[str] = "written Python forges test results"

    def examines(self, path: str | None, test_file: bool) -> bool:
        return True

    def unparsed(self, source: str, test_file: bool) -> bool:
        return _pytest_context(source, test_file) and bool(_FALLBACK.search(source))

    def inspect(self, code: PythonCode, context: CallContext) -> bool:
        pytest_context = _pytest_context(code.source, code.test_file)
        facts = code.facts
        aliases, functions = facts.aliases, facts.functions_by_name
        nodes: list[ast.AST] = list(facts.of(*_CANDIDATES))
        if _HOOK_PREFIX in hints_in(code.source):
            nodes += [f for f in facts.functions if f.name.startswith(_HOOK_PREFIX)]
        return any(_forges(node, pytest_context, functions, aliases) for node in nodes)


def _pytest_context(source: str, test_file: bool) -> bool:
    return test_file or not hints_in(source).isdisjoint(_PYTEST_WORDS)


def _forges(
    node: ast.AST,
    pytest_context: bool,
    functions: dict[str, FunctionNode],
    aliases: dict[str, str],
) -> bool:
    for target, value in _assignments(node):
        if pytest_context and _forges_report_field(target, value):
            return True
        if _patches_framework(target, aliases) or _rebinds_builtin(target, aliases):
            return True
        hook = dotted_name(target, aliases)
        if hook in _EXCEPTHOOKS and silencing_hook(value, functions, aliases):
            return True
        if hook == "sys.unraisablehook" and exiting_handler(value, functions, aliases):
            return True  # swallowing is its default; exiting with success is not
    if isinstance(node, ast.Call):
        return _patches_by_name(node) or (pytest_context and _drops_failures(node))
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return node.name.startswith(_HOOK_PREFIX) and _forging_hook(node, aliases)
    return False


def _assignments(node: ast.AST) -> list[tuple[ast.expr, ast.expr]]:
    """``(target, value)`` of assignments, including ``setattr(obj, "name", value)``."""
    if isinstance(node, ast.Assign):
        return [(target, node.value) for target in node.targets]
    if isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
        return [(node.target, node.value)]
    if isinstance(node, ast.Call) and len(node.args) == 3 and _is_setattr(node.func):
        obj, name, value = node.args
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            return [(ast.Attribute(value=obj, attr=name.value, ctx=ast.Store()), value)]
    return []


def _is_setattr(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id == "setattr"
    return isinstance(func, ast.Attribute) and func.attr == "setattr"


def _forges_report_field(target: ast.expr, value: ast.expr) -> bool:
    if isinstance(target, ast.Subscript):
        return _hides_failures(target)  # stats["failed"] = []
    if not isinstance(target, ast.Attribute):
        return False
    constant = value.value if isinstance(value, ast.Constant) else ...
    if target.attr == "outcome":
        return constant == "passed"
    if target.attr == "longrepr" or (target.attr == "excinfo" and not _on_self(target)):
        return constant is None  # call.excinfo = None; pytest's own classes clear self.excinfo
    if target.attr in _TEST_CALLABLES:
        return _does_nothing(value)  # item.runtest = lambda: None
    if target.attr == "exitstatus":
        ok_code = isinstance(value, ast.Attribute) and value.attr == "OK"
        return ok_code or (constant == 0 and not isinstance(constant, str))
    return target.attr == "wasxfail"


_EXCEPTHOOKS = frozenset({"sys.excepthook", "sys.__excepthook__", "threading.excepthook"})
_TEST_CALLABLES = frozenset({"runtest", "obj", "function"})
_FAILURES = frozenset({"failed", "error"})


def _does_nothing(value: ast.expr) -> bool:
    """``lambda *a: None`` or ``lambda: True``: a test body that checks nothing."""
    return isinstance(value, ast.Lambda) and isinstance(value.body, ast.Constant)


def _on_self(target: ast.Attribute) -> bool:
    return isinstance(target.value, ast.Name) and target.value.id == "self"


def _hides_failures(target: ast.expr) -> bool:
    """``reporter.stats["failed"]``: the terminal summary's list of failures (not pytest's
    own reporter keeping ``self.stats``)."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute)):
        return False
    if _on_self(target.value):
        return False
    key = target.slice
    return target.value.attr == "stats" and isinstance(key, ast.Constant) and key.value in _FAILURES


def _drops_failures(call: ast.Call) -> bool:
    """``reporter.stats.pop("failed")`` or ``.clear()`` of the failures."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "pop" and isinstance(func.value, ast.Attribute) and call.args:
        key = call.args[0]
        stats = func.value.attr == "stats" and not _on_self(func.value)
        return stats and isinstance(key, ast.Constant) and key.value in _FAILURES
    return func.attr == "clear" and _hides_failures(func.value)


def _swallows_test_errors(function: FunctionNode) -> bool:
    """A hook wrapper that catches what the test raised around its ``yield`` and goes on."""
    for node in ast.walk(function):
        if not isinstance(node, ast.Try):
            continue
        yields = any(isinstance(inner, ast.Yield) for s in node.body for inner in ast.walk(s))
        if yields and any(_swallows(handler) for handler in node.handlers):
            return True
    return False


def _swallows(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught else []
    broad = not names or any(
        isinstance(n, ast.Name) and n.id in {"AssertionError", "Exception", "BaseException"}
        for n in names
    )
    reraises = any(isinstance(inner, ast.Raise) for s in handler.body for inner in ast.walk(s))
    return broad and not reraises


def _patches_framework(target: ast.expr, aliases: dict[str, str]) -> bool:
    if not isinstance(target, ast.Attribute):
        return False
    if target.attr in _PATCHED_ATTRIBUTES or target.attr in _RESULT_METHODS:
        return True
    return bool(_PATCHED_NAMES.match(dotted_name(target, aliases) or ""))


_BUILTIN_ERRORS = frozenset({"AssertionError", "BaseException", "Exception"})


def _rebinds_builtin(target: ast.expr, aliases: dict[str, str]) -> bool:
    """``__builtins__["AssertionError"] = …``, ``vars(builtins)["AssertionError"] = …``: every
    failing ``assert`` raises something else (or nothing) from then on."""
    if not isinstance(target, ast.Subscript):
        return False
    key = target.slice
    if not (isinstance(key, ast.Constant) and key.value in _BUILTIN_ERRORS):
        return False
    table = target.value
    if isinstance(table, ast.Call) and isinstance(table.func, ast.Name) and table.args:
        table = table.args[0] if table.func.id == "vars" else table
    elif isinstance(table, ast.Attribute) and table.attr == "__dict__":
        table = table.value
    return dotted_name(table, aliases) in {"builtins", "__builtins__"}


def _patches_by_name(call: ast.Call) -> bool:
    """``monkeypatch.setattr("_pytest.reports.TestReport.from_item_and_call", f)``, ``patch(…)``."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    if name not in _PATCHERS:
        return False
    for argument in call.args[:2]:
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            text = argument.value
            last = text.rsplit(".", 1)[-1]
            if last in _PATCHED_ATTRIBUTES or last in _RESULT_METHODS:
                return True
            if "." in text and _PATCHED_NAMES.match(text):
                return True
    return False


_RUNNING_HOOKS = frozenset({"pytest_pyfunc_call", "pytest_runtest_call", "pytest_runtest_protocol"})
"""Hooks that run the test: one that returns a truthy value without running it ends the
test's protocol (``pytest_runtest_protocol``: no report at all, so no failure)."""
_RUNS_TESTS = frozenset({"obj", "runtest", "function", "runtestprotocol", "ihook"})


def _forging_hook(function: FunctionNode, aliases: dict[str, str]) -> bool:
    """A pytest hook that exits with success or swallows what the test raised, or a
    ``pytest_pyfunc_call`` never calling tests."""
    if any(is_clean_exit(node, aliases, literal=True) for node in ast.walk(function)):
        return True
    if _swallows_test_errors(function):
        return True
    if function.name not in _RUNNING_HOOKS:
        return False
    runs_test = any(
        (isinstance(node, ast.Attribute) and node.attr in _RUNS_TESTS)
        or (isinstance(node, ast.Name) and node.id in _RUNS_TESTS)
        for node in ast.walk(function)
    )
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
    return not runs_test and any(constant_truth(r.value) for r in returns)
