"""``stdlib-patching``: written Python replaces clocks, builtins or comparison helpers on import.

## What it does
Matches a write of non-test Python (or ``conftest.py``) that, when imported, replaces
``time.time``/``perf_counter``/``monotonic``/``process_time``/``sleep`` (and ``_ns``
forms), ``datetime.datetime``/``date``, ``timeit.default_timer``, anything in
``builtins``/``__builtins__``, ``torch.cuda.synchronize``/``Event``, ``torch.allclose``/
``equal``, ``numpy.allclose``/``array_equal``/``testing``, ``math.isclose``,
``unittest.TestCase.assert*``/``fail*``; by assignment,
``setattr``, ``module.__dict__[…] =``, ``patch(…).start()`` or ``freeze_time(…).start()``;
or plants a module with ``sys.modules["name"] = …``. Statements count when they run at
import: module level (outside ``if __name__ == "__main__":``), class bodies, and bodies of
module-level functions called at module level.

## Why is this bad?
A fake clock or a no-op ``synchronize`` makes a benchmark report impossible speed, and a
patched builtin or comparison makes checks pass (METR's fake clock and disabled CUDA sync).

## Example
``import time\\n_start = time.time()\\ntime.time = lambda: _start``. Not matched: reading
``time.time()``; ``monkeypatch.setattr(time, "time", …)`` or ``freezegun`` inside a test.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterator
from typing import ClassVar

from safeagents._detector import CallContext
from safeagents.detectors._ast_facts import (
    dotted_name,
    import_time_nodes,
    scope_nodes,
)
from safeagents.detectors._python import PythonCode, PythonDetector, starts_indented

__all__ = ["StdlibPatching"]

_CLOCKS = ("time", "perf_counter", "monotonic", "process_time", "thread_time", "clock_gettime")
_PROTECTED = frozenset(
    [f"time.{clock}{suffix}" for clock in _CLOCKS for suffix in ("", "_ns")]
    + ["time.sleep", "datetime.datetime", "datetime.date", "timeit.default_timer"]
    + ["torch.cuda.synchronize", "torch.cuda.Event", "torch.allclose", "torch.equal"]
    + ["torch.testing", "numpy.allclose", "numpy.array_equal", "numpy.isclose"]
    + ["numpy.testing", "math.isclose"]
)
_TEST_CASE_CHECKS = re.compile(r"unittest\.(?:case\.)?TestCase\.(?:assert\w*|fail\w*)$")
_PROTECTED_MODULES = frozenset({"builtins", "__builtins__"})
_FALLBACK = re.compile(
    r"^(?:time\.(?:time|perf_counter|monotonic|process_time)(?:_ns)?|datetime\.(?:datetime|date)"
    r"|builtins\.\w+|__builtins__\s*\[[^\]]+\]|torch\.cuda\.synchronize"
    r"|sys\.modules\s*\[\s*['\"][^'\"]+['\"]\s*\])\s*=(?!=)"
    r"|^setattr\(\s*(?:time|builtins|__builtins__|datetime)\s*,",
    re.MULTILINE,
)


class StdlibPatching(PythonDetector):
    name: ClassVar[str] = "stdlib-patching"
    description: ClassVar[str] = "written Python patches clocks, builtins or checks at import"
    fallback: ClassVar[re.Pattern[str] | None] = _FALLBACK

    def examines(self, path: str | None, test_file: bool) -> bool:
        return not test_file or posixpath.basename(path or "") == "conftest.py"

    def inspect(self, code: PythonCode, context: CallContext) -> bool:
        if starts_indented(code.source):
            return False
        tree, facts = code.tree, code.facts
        aliases = facts.aliases
        candidates = facts.of(ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call)
        if not any(_patches(node, aliases) for node in candidates):
            return False  # nothing anywhere patches, so nothing run on import does
        return any(_patches(node, aliases) for node in _run_on_import(tree))


def _run_on_import(tree: ast.Module) -> Iterator[ast.AST]:
    """Import-time nodes, then the bodies of module-level functions called at import."""
    functions = {
        statement.name: statement
        for statement in tree.body
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    called: dict[str, None] = {}
    for node in import_time_nodes(tree.body):
        yield node
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called[node.func.id] = None
    for name in called:
        if name in functions:
            yield from scope_nodes(functions[name].body)


def _protected(name: str | None) -> bool:
    if not name or "." not in name:
        return False
    if name.split(".", 1)[0] in _PROTECTED_MODULES or _TEST_CASE_CHECKS.match(name):
        return True
    return any(name == target or name.startswith(target + ".") for target in _PROTECTED)


def _patches(node: ast.AST, aliases: dict[str, str]) -> bool:
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(_patched_target(target, aliases) for target in targets)
    if isinstance(node, ast.Call):
        return _patching_call(node, aliases)
    return False


def _patched_target(target: ast.expr, aliases: dict[str, str]) -> bool:
    if isinstance(target, ast.Tuple | ast.List):
        return any(_patched_target(element, aliases) for element in target.elts)
    if isinstance(target, ast.Attribute):
        return _protected(dotted_name(target, aliases))
    if not isinstance(target, ast.Subscript):
        return False
    key = target.slice
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return False
    container = dotted_name(target.value, aliases) or ""
    if container == "sys.modules":
        return key.value != "__name__"
    if container in _PROTECTED_MODULES:
        return True
    return container.endswith(".__dict__") and _protected(f"{container[:-9]}.{key.value}")


def _patching_call(call: ast.Call, aliases: dict[str, str]) -> bool:
    func = call.func
    name = dotted_name(func, aliases) or ""
    method = func.attr if isinstance(func, ast.Attribute) else name
    if method == "setattr" and len(call.args) == 2:
        return _protected(_string(call.args[0]))
    if method == "setattr" and len(call.args) >= 3:
        return _protected(_attribute_path(call.args[0], call.args[1], aliases))
    if name in {"sys.modules.update", "sys.modules.__setitem__", "sys.modules.setdefault"}:
        return True
    if method == "start" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
        return _starts_patch(func.value, aliases)
    return False


def _string(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _attribute_path(owner: ast.expr, attribute: ast.expr, aliases: dict[str, str]) -> str | None:
    base, name = dotted_name(owner, aliases), _string(attribute)
    return f"{base}.{name}" if base and name else None


def _starts_patch(patcher: ast.Call, aliases: dict[str, str]) -> bool:
    """``patch("time.time", …).start()``, ``patch.object(time, "time").start()``, freezegun."""
    name = dotted_name(patcher.func, aliases) or ""
    if name.rsplit(".", 1)[-1] == "freeze_time":
        return True
    if name.endswith("patch.object") and len(patcher.args) >= 2:
        return _protected(_attribute_path(patcher.args[0], patcher.args[1], aliases))
    if name.endswith("patch") and patcher.args:
        return _protected(_string(patcher.args[0]))
    return False
