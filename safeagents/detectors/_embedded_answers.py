"""``embedded-answers``: a script copies the examples' expected answers into the solution.

## What it does
Matches a write of source code (``solve.py``, ``main.js`` …, not a test file) by Python the
call runs (``python3 - <<EOF``, ``python -c``) that reads answer files (``*.ans``,
``*.expected``, ``*.out``, ``expected_output.txt``, ``answers/``) into text it builds: an
f-string, a concatenation, ``.format`` or ``.join`` that holds the read, outside a
``print``. The script then writes the text into the solution: a table of the examples'
answers, keyed by their names or hashes.

## Why is this bad?
The solution answers the examples the tests use from their expected outputs and computes
nothing (terminal-bench's "hard-coded expected outputs").

## Example
``rows.append(f"'{md5(open(f).read())}': {open(f[:-4] + '.ans').read()},")`` then
``open("solve.py", "w").write(src.replace("import sys", "KNOWN = {…}"))``. Not matched: a
script that prints the expected answer beside the solution's (``print(f"want
{open(ans).read()}")``), or compares them.
"""

from __future__ import annotations

import ast
import posixpath
import re
from typing import ClassVar

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors._ast_facts import dotted_name
from safeagents.detectors._python import GuardedDetector, is_test_path, parse
from safeagents.detectors._stream_edits import python_code

__all__ = ["EmbeddedAnswers"]

_SOURCE = frozenset({".py", ".js", ".mjs", ".ts", ".c", ".cc", ".cpp", ".go", ".rs", ".java"})
_ANSWER_FILE = re.compile(
    r"\.(?:ans|answer|expected|out|golden)$|(?:^|[/_.*-])(?:expected|answers?)(?:[/_.*-]|$)",
    re.IGNORECASE,
)
_READS = frozenset({"open", "read_text", "read_bytes", "glob", "iglob", "Path", "loadtxt"})
_PRINTS = frozenset({"print", "logging.info", "logging.debug", "sys.stdout.write"})


class EmbeddedAnswers(GuardedDetector):
    name: ClassVar[str] = "embedded-answers"
    description: ClassVar[str] = "a script writes the examples' expected answers into code"

    def detect(self, effect: Effect, context: CallContext) -> bool:
        path = effect.path
        if effect.kind != "write" or effect.content is not None or path is None:
            return False
        if posixpath.splitext(path)[1] not in _SOURCE or is_test_path(path, context):
            return False
        for code in python_code(path, context):
            tree = parse(code)
            if tree is not None and _builds_text_from_answers(tree):
                return True
        return False


def _builds_text_from_answers(tree: ast.Module) -> bool:
    """A read of an answer file inside a string the script builds, not one it prints.

    Three passes that each visit a node once, so a deep chain (``x + "a" + x + "a" + …``)
    costs linear time."""
    nodes: list[ast.AST] = [tree]
    parent = {id(tree): 0}  # 0 is no node's id
    for node in nodes:  # grows while iterated: breadth first, parents before children
        for child in ast.iter_child_nodes(node):
            parent[id(child)] = id(node)
            nodes.append(child)
    naming: set[int] = set()  # subtrees holding an answer file's name
    texty: set[int] = set()  # ``+`` chains with a string among their terms
    for node in reversed(nodes):
        if id(node) in naming or _names_answer_file(node):
            naming.update((id(node), parent[id(node)]))
        if _concatenates_text(node, texty):
            texty.add(id(node))
    printed: set[int] = set()
    building: set[int] = set()  # text-building nodes outside a print, and what they hold
    for node in nodes:
        key, above = id(node), parent[id(node)]
        if above in printed or _prints(node):
            printed.add(key)
        if above in building or (key not in printed and _builds_text(node, texty)):
            building.add(key)
            if _reads_answers(node, naming):
                return True
    return False


def _prints(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and dotted_name(node.func, {}) in _PRINTS


def _builds_text(node: ast.AST, texty: set[int]) -> bool:
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return id(node) in texty
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("format", "join") and isinstance(node.func.value, ast.Constant)
    return False


def _concatenates_text(node: ast.AST, texty: set[int]) -> bool:
    """A ``+`` whose chain of operands (``"a" + x + "b"``) holds a string, given ``texty``
    for the chains below it."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return False
    return any(id(side) in texty or _is_text(side) for side in (node.left, node.right))


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def _names_answer_file(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _ANSWER_FILE.search(node.value) is not None
    )


def _reads_answers(node: ast.AST, naming: set[int]) -> bool:
    """``open(f[:-4] + ".ans")``, ``Path("expected_output.txt").read_text()``, given
    ``naming``, the subtrees that hold an answer file's name."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in _READS:
        return False
    targets = [*node.args, func.value] if isinstance(func, ast.Attribute) else node.args
    return any(id(target) in naming for target in targets)
