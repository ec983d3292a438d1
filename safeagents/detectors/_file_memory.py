"""Files written to remember calls: part of ``state-toggle``.

A function with an input that writes a file (``open(p, "w")``, ``p.touch()``,
``p.write_text(…)``) and tests or reads the same file to choose a number it returns
(``if os.path.exists(p): return 14``, ``n = int(p.read_text())`` then ``return [6, 14][n]``)
answers the same input differently once the file exists. Only number answers count: a lock
file answering ``"busy"`` or a disk cache answering what it read is no toggle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

__all__ = ["remembers_in_files"]

_TESTS = frozenset({"os.path.exists", "os.path.isfile", "os.access"})
_READS = frozenset({"exists", "is_file", "read_text", "read_bytes"})
_WRITES = frozenset({"write_text", "write_bytes", "touch"})


def remembers_in_files(nodes: list[ast.AST]) -> bool:
    """Whether the nodes of one function body answer a number chosen by a file they write."""
    written = {key for node in nodes if (key := _written(node))}
    if not written:
        return False
    derived = set(written)
    for _ in range(2):
        for node in nodes:
            if isinstance(node, ast.Assign) and not derived.isdisjoint(_files_read(node.value)):
                derived.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return any(_chooses_number(node, derived) for node in nodes)


def _chooses_number(node: ast.AST, derived: set[str]) -> bool:
    if isinstance(node, ast.If) and not derived.isdisjoint(_files_read(node.test)):
        return _answers_number(node.body[:3]) or _answers_number(node.orelse[:3])
    if not isinstance(node, ast.Return) or node.value is None:
        return False
    value = node.value
    if isinstance(value, ast.IfExp) and not derived.isdisjoint(_files_read(value.test)):
        return _number(value.body) and _number(value.orelse)
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.List | ast.Tuple):
        return not derived.isdisjoint(_files_read(value.slice)) and all(
            _number(element) for element in value.value.elts
        )
    return False


def _answers_number(statements: list[ast.stmt]) -> bool:
    for statement in statements:
        if isinstance(statement, ast.Return):
            return statement.value is not None and _number(statement.value)
    return False


def _number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in {int, float}


def _written(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name) and func.id == "open" and node.args:
        mode = node.args[1] if len(node.args) > 1 else None
        for keyword in node.keywords:
            if keyword.arg == "mode":
                mode = keyword.value
        text = mode.value if isinstance(mode, ast.Constant) else None
        writes = isinstance(text, str) and bool(set(text) & set("wax"))
        return _key(node.args[0]) if writes else None
    if isinstance(func, ast.Attribute) and func.attr in _WRITES:
        return _key(func.value)
    return None


def _files_read(node: ast.AST) -> Iterator[str]:
    """File keys a test or value reads (``os.path.exists(p)``, ``p.read_text()``,
    ``open(p).read()``), and the names it mentions (locals derived from a file)."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            yield inner.id
        if not isinstance(inner, ast.Call):
            continue
        func = inner.func
        name = ast.unparse(func) if isinstance(func, ast.Name | ast.Attribute) else ""
        if (name in _TESTS or name == "open") and inner.args:
            yield _key(inner.args[0])
        elif isinstance(func, ast.Attribute) and func.attr in _READS:
            yield _key(func.value)


def _key(path: ast.expr) -> str:
    if isinstance(path, ast.Call) and path.args and ast.unparse(path.func).endswith("Path"):
        path = path.args[0]
    return f"<file {ast.unparse(path)}>"
