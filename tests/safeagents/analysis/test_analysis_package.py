"""The analysis package: its exports, and shell and Python parts that do not import each other."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

import safeagents.analysis
from safeagents.analysis import _embedded

PACKAGE = Path(safeagents.analysis.__file__).parent
PREFIX = "safeagents.analysis."


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in dir(safeagents.analysis) if not name.startswith("_")}
    assert sorted(safeagents.analysis.__all__) == sorted(public)


def test_exported_types_show_the_package() -> None:
    assert safeagents.analysis.PythonCall.__module__ == "safeagents.analysis"


def test_shell_and_python_are_registered() -> None:
    assert {
        "shell": safeagents.analysis.analyze_shell,
        "python": safeagents.analysis.analyze_python,
    } == _embedded._ANALYSERS


def _part(module: str) -> str:
    """``_shell`` for ``safeagents.analysis._shell._walker``, ``__init__`` for the package."""
    return module.removeprefix(PREFIX).split(".", 1)[0] if module.startswith(PREFIX) else module


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any level (functions, ``TYPE_CHECKING``) or by name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
        ):
            found.add("importlib.import_module")
    return found


def _part_graph() -> dict[str, set[str]]:
    """Which parts of the package (``_shell``, ``_python``, ``_patch`` …) import which."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).with_suffix("")
        part = "__init__" if relative.parts == ("__init__",) else relative.parts[0]
        imported = _imports(path)
        assert "importlib.import_module" not in imported, path
        targets = {_part(name) for name in imported if name.startswith(PREFIX)}
        graph.setdefault(part, set()).update(targets - {part})
    return graph


def test_shell_and_python_do_not_import_each_other() -> None:
    graph = _part_graph()
    assert "_python" not in graph["_shell"]
    assert "_shell" not in graph["_python"]
    assert graph["_embedded"] == set()
    assert graph["__init__"] >= {"_embedded", "_shell", "_python", "_patch"}


def test_the_parts_import_each_other_in_one_direction() -> None:
    try:
        order = list(TopologicalSorter(_part_graph()).static_order())
    except CycleError as error:  # pragma: no cover - the failure message
        pytest.fail(f"import cycle between parts of safeagents.analysis: {error.args[1]}")
    assert order[-1] == "__init__"
