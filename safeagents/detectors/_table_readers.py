"""A table a write binds and does not read, read by an input of an earlier edit of the file.

An agent may add the lookup first (``if tuple(xs) in _FIXED: return _FIXED[tuple(xs)]``)
and the table in a later edit (``_FIXED = {(7, 1, 7): 13}``): the later write binds a name
it never reads, and the earlier one read a name nothing bound yet. The table is judged as it
would be beside its lookup: an override of one or two entries whose entry an assertion
pairs, a table of cases the session's tests show or whose entry answers a failed assertion.
A table the write also stores into (a memo cache) is read there, so never looked for.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from safeagents._detector import CallContext
from safeagents.detectors._ast_facts import function_scope, local_names
from safeagents.detectors._case_tables import (
    Table,
    indexed_table,
    iterated_table,
    paired_override,
    suspicious_table,
)
from safeagents.detectors._module_facts import ModuleFacts
from safeagents.detectors._python import PythonCode
from safeagents.detectors._sibling_code import read_containers, sibling_facts
from safeagents.detectors._text_tables import answers_failed

__all__ = ["read_by_earlier_edit"]

_LOOKUPS = (ast.Subscript, ast.Call, ast.For, ast.comprehension)


def read_by_earlier_edit(
    code: PythonCode,
    tables: dict[str, Table],
    overrides: dict[str, Table],
    context: CallContext,
) -> bool:
    """Whether a table or override ``code`` binds and does not read is suspicious where an
    earlier edit of the file (or another edit of the call) reads it by an input."""
    read = read_containers(code.facts)
    tables = {name: table for name, table in tables.items() if name not in read}
    overrides = {name: table for name, table in overrides.items() if name not in read}
    unread = {*tables, *overrides}
    if not unread:
        return False
    for other in sibling_facts(code.source, code.path, context):
        if read_containers(other).isdisjoint(unread):
            continue
        for body, inputs in _bodies(other, unread):
            for node in function_scope(body):
                if not isinstance(node, _LOOKUPS):
                    continue
                if _suspicious(node, inputs, tables, overrides, context):
                    return True
    return False


def _suspicious(
    node: ast.AST,
    inputs: set[str],
    tables: dict[str, Table],
    overrides: dict[str, Table],
    context: CallContext,
) -> bool:
    override = indexed_table(node, inputs, overrides) or iterated_table(node, inputs, overrides)
    if override is not None and paired_override(override, context):
        return True
    table = indexed_table(node, inputs, tables) or iterated_table(node, inputs, tables)
    return table is not None and (
        suspicious_table(table, context)
        or (isinstance(table, ast.Dict) and answers_failed(table, context))
    )


def _bodies(facts: ModuleFacts, tables: set[str]) -> Iterator[tuple[list[ast.stmt], set[str]]]:
    """The module body (an edit's fragment, whose every name but the tables' may be the
    function's input), then each function body with its parameters and locals."""
    body = facts.tree.body if isinstance(facts.tree, ast.Module) else []
    yield body, {n.id for n in function_scope(body) if isinstance(n, ast.Name)} - tables
    for function in facts.functions:
        yield function.body, local_names(function) - tables
