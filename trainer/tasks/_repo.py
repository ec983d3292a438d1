"""A local Python repository with a pytest suite, as the task generator sees it: its source
and test files, its functions, and which passing tests call which function (one traced run
of the suite in a scratch copy)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Function",
    "Repository",
    "RepositoryError",
    "TestRun",
    "copy_repository",
    "run_pytest",
    "scan_repository",
]

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        "__pycache__",
        "build",
        "dist",
        "node_modules",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "docs",
        "doc",
        "examples",
        "benchmarks",
    }
)
TEST_DIRS = frozenset({"tests", "test", "testing"})
_PLUGIN = "_safeagents_trace"
_PLUGIN_SOURCE = """
import json, os, sys
import pytest

_ROOT = os.environ["SAFEAGENTS_TRACE_ROOT"] + os.sep
_calls, _passed, _current = {}, [], None


def _profile(frame, event, arg):
    if event == "call" and _current is not None:
        code = frame.f_code
        if code.co_filename.startswith(_ROOT):
            _current.add((code.co_filename[len(_ROOT):], code.co_firstlineno))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    global _current
    _current = set()
    sys.setprofile(_profile)
    try:
        yield
    finally:
        sys.setprofile(None)
        _calls[item.nodeid] = sorted(_current)
        _current = None


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed:
        _passed.append(report.nodeid)


def pytest_sessionfinish(session):
    with open(os.environ["SAFEAGENTS_TRACE_OUT"], "w") as out:
        json.dump({"calls": _calls, "passed": _passed}, out)
"""


class RepositoryError(ValueError):
    """The repository cannot serve as a source of tasks (no tests, a failing suite...)."""


@dataclass(frozen=True, slots=True)
class Function:
    """A function or method of a source file; ``start`` counts its decorators."""

    path: str
    qualname: str
    start: int
    end: int
    body_start: int
    docstring: str | None
    node: ast.FunctionDef | ast.AsyncFunctionDef = field(compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.qualname.rpartition(".")[2]

    @property
    def lines(self) -> int:
        return self.end - self.start + 1

    @property
    def label(self) -> str:
        return f"{self.path}:{self.qualname}"


@dataclass(frozen=True, slots=True)
class TestRun:
    """How a pytest run ended (``exit_code`` ``None``: timed out) and its output tail."""

    exit_code: int | None
    output: str


@dataclass(slots=True)
class Repository:
    """A scanned repository: ``root`` is the scratch copy every run uses."""

    name: str
    root: Path
    sources: list[str]
    tests: list[str]
    functions: list[Function]
    passed: list[str] = field(default_factory=list)
    callers: dict[str, list[str]] = field(default_factory=dict)
    """``Function.label`` -> the passing test node ids that call it."""

    def source(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")

    def test_file(self, node_id: str) -> str:
        return node_id.split("::", 1)[0]


def _is_test_file(relative: Path) -> bool:
    name = relative.name
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(part in TEST_DIRS for part in relative.parts[:-1])
    )


def _python_files(root: Path) -> list[Path]:
    found = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info"))
        found += [Path(directory, f).relative_to(root) for f in sorted(files) if f.endswith(".py")]
    return found


def copy_repository(source: Path, destination: Path) -> Path:
    """``source`` without version control, caches, build output and documentation."""

    def ignore(directory: str, names: list[str]) -> set[str]:
        return {
            name
            for name in names
            if name in SKIPPED_DIRS
            or name.endswith((".egg-info", ".pyc", ".lock"))
            or name in {"changelog.d", "CHANGELOG.rst", "CHANGELOG.md"}
        }

    shutil.copytree(source, destination, symlinks=True, ignore=ignore)
    return destination


def _functions(path: str, text: str) -> list[Function]:
    tree = ast.parse(text)
    found: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = f"{prefix}{child.name}"
                start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                docstring = ast.get_docstring(child)
                first = child.body[1 if docstring and len(child.body) > 1 else 0]
                found.append(
                    Function(
                        path,
                        qualname,
                        start,
                        child.end_lineno or child.lineno,
                        first.lineno,
                        docstring,
                        child,
                    )
                )
                visit(child, f"{qualname}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return found


def run_pytest(
    root: Path, args: Sequence[str], timeout: float, env: dict[str, str] | None = None
) -> TestRun:
    """``python -m pytest`` in ``root`` (its own process group, killed on a timeout)."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        "--rootdir",
        str(root),
        *args,
    ]
    run_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    src = root / "src"
    if src.is_dir():
        run_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), run_env.get("PYTHONPATH")]))
    try:
        done = subprocess.run(
            command,
            cwd=root,
            env=run_env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as expired:
        output = expired.stdout if isinstance(expired.stdout, str) else ""
        return TestRun(None, output[-2000:])
    return TestRun(done.returncode, (done.stdout + done.stderr)[-2000:])


def scan_repository(source: Path, scratch: Path, *, timeout: float = 600.0) -> Repository:
    """Copy ``source`` into ``scratch``, parse it and run its suite once, traced."""
    if not source.is_dir():
        raise RepositoryError(f"{source}: not a directory")
    root = copy_repository(source, scratch / "repo")
    files = _python_files(root)
    tests = [str(f) for f in files if _is_test_file(f) and f.name != "conftest.py"]
    sources = [str(f) for f in files if not _is_test_file(f) and f.name != "setup.py"]
    if not tests:
        raise RepositoryError(f"{source}: no test files (test_*.py or *_test.py)")
    functions: list[Function] = []
    for path in sources:
        try:
            functions += _functions(path, (root / path).read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue  # a file this Python cannot parse is no source of tasks
    plugin_dir = scratch / "plugin"
    plugin_dir.mkdir()
    (plugin_dir / f"{_PLUGIN}.py").write_text(_PLUGIN_SOURCE, encoding="utf-8")
    trace = scratch / "trace.json"
    env = {
        "SAFEAGENTS_TRACE_ROOT": str(root),
        "SAFEAGENTS_TRACE_OUT": str(trace),
        "PYTHONPATH": str(plugin_dir),
    }
    run = run_pytest(root, ["-p", _PLUGIN, *tests], timeout, env)
    if not trace.is_file():
        raise RepositoryError(f"{source}: the test suite did not run: {run.output[-800:]}")
    traced = json.loads(trace.read_text(encoding="utf-8"))
    by_start = {(f.path, f.start): f for f in functions}
    repository = Repository(source.resolve().name, root, sources, tests, functions)
    repository.passed = list(traced["passed"])
    passing = set(repository.passed)
    for node_id, calls in traced["calls"].items():
        if node_id not in passing:
            continue
        for path, line in calls:
            function = by_start.get((path, line))
            if function is not None:
                repository.callers.setdefault(function.label, []).append(node_id)
    if not repository.callers:
        raise RepositoryError(f"{source}: no passing test calls a function of the repository")
    return repository
