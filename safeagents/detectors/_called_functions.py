"""Which functions of written code the session's tests call, and the asserted cases of each.

The tests call a function by its name (``assert slug("A b") == "a-b"``) or as ``candidate``
(LiveCodeBench-style ``check(candidate)``), which stands for a function the instruction
defines, or, when it defines none, for the module's one public function. Top-level
functions and methods of top-level classes count (``self``/``cls`` dropped); a fragment of a
patch without its ``def`` stands for the instruction's one function.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from safeagents._impossible import TASK_CALLEES
from safeagents.detectors._asserted_cases import Case, CaseBook

__all__ = ["callee_names", "cases_of", "functions_called", "instruction_signatures"]

_DEFINED = re.compile(r"\bdef[ \t]+(\w+)[ \t]*\(([^)]*)\)")

_last_signatures: tuple[str, dict[str, list[str]]] | None = None


def instruction_signatures(instruction: str) -> dict[str, list[str]]:
    """The functions the instruction defines, with their parameter names."""
    global _last_signatures
    last = _last_signatures
    if last is not None and last[0] is instruction:
        return last[1]
    signatures: dict[str, list[str]] = {}
    for name, params in _DEFINED.findall(instruction):
        if name != "check" and name not in signatures:
            names = [part.split(":")[0].split("=")[0].strip() for part in params.split(",")]
            signatures[name] = [n for n in names if n.isidentifier() and n not in _SELF]
    _last_signatures = (instruction, signatures)
    return signatures


_SELF = frozenset({"self", "cls"})


def callee_names(book: CaseBook, signatures: dict[str, list[str]]) -> set[str] | None:
    """The names of functions the tests call; None when any function may be the one the
    tests call as ``candidate`` (no instruction names it)."""
    names = set(book.by_callee)
    if any(callee in book.by_callee for callee in TASK_CALLEES):
        if not signatures:
            return None
        names.update(signatures)
    return names


_FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef)


def functions_called(
    tree: ast.Module, fragment: bool, signatures: dict[str, list[str]], callees: set[str] | None
) -> Iterator[tuple[list[ast.stmt], list[str], str]]:
    """Top-level functions and methods of top-level classes (body, parameters without
    ``self``, name) that the tests may call (``callees``, None for any); for a fragment
    without a ``def``, its body as the instruction's function."""
    found = False
    for statement in tree.body:
        members = statement.body if isinstance(statement, ast.ClassDef) else [statement]
        for node in members:
            if isinstance(node, _FUNCTION):
                found = True
                if callees is not None and node.name not in callees:
                    continue
                args = node.args
                if args.vararg or args.kwonlyargs:
                    continue
                params = [a.arg for a in (*args.posonlyargs, *args.args)]
                if params and params[0] in _SELF:  # a method, or one from an edit's lines
                    params = params[1:]
                yield node.body, params, node.name
    if not found and fragment and len(signatures) == 1:
        ((name, params),) = signatures.items()
        yield tree.body, params, name


def cases_of(
    name: str, arity: int, book: CaseBook, signatures: dict[str, list[str]], tree: ast.Module
) -> list[Case]:
    cases = list(book.by_callee.get(name, ()))
    if name in signatures or (not signatures and _only_function(tree, name)):
        for callee in TASK_CALLEES:
            cases.extend(book.by_callee.get(callee, ()))
    unique: dict[tuple[str, str], Case] = {}
    for case in cases:
        if len(case.args) == arity:
            unique.setdefault((case.key, repr(case.expected)), case)
    return list(unique.values())


def _only_function(tree: ast.Module, name: str) -> bool:
    """Whether ``name`` is the module's one public function, tests aside (a ``cat`` of the
    solution and its test file shows ``test_func(candidate)`` after it)."""
    public = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith(_NOT_SOLUTION)
    ]
    return public == [name]


_NOT_SOLUTION = ("_", "test", "check")
