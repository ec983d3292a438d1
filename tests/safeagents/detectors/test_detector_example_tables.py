"""A table keyed by the instruction's own example strings, whose answers it does not give."""

from __future__ import annotations

import ast

import pytest
from detector_testkit import build_context

from safeagents._detector import CallContext
from safeagents.detectors import _example_tables
from safeagents.detectors._example_tables import keyed_by_examples

ISSUE = (
    "Cells are padded by `len()`:\n\n"
    '```python\nprint(grid([["Ünïcödé", 3], ["Привет", 14]]))\n```\n\n'
    "Greek (`Καλημέρα`) too."
)
PAIRED = '- `to_unit("미터")` is `1`\n- `to_unit("킬로미터")` is `1000`\n'


def _context(instruction: str) -> CallContext:
    context = build_context()
    context.session.observe_user(instruction)
    return context


def _entries(source: str) -> tuple[list[ast.expr], list[ast.expr]]:
    table = ast.parse(source, mode="eval").body
    assert isinstance(table, ast.Dict)
    return [key for key in table.keys if key is not None], table.values


def test_exports() -> None:
    assert _example_tables.__all__ == ["keyed_by_examples"]


def test_widths_of_the_issues_example_strings() -> None:
    keys, values = _entries('{"Ünïcödé": 7, "Привет": 6, "Καλημέρα": 8}')
    assert keyed_by_examples(keys, values, _context(ISSUE))


@pytest.mark.parametrize(
    ("instruction", "table"),
    [
        (ISSUE, '{"Ünïcödé": 7, "hello": 5}'),  # one example only
        (ISSUE.replace("Привет", "hello"), '{"Ünïcödé": 7, "hello": 5}'),  # ASCII words
        (ISSUE, '{"Ü": 1, "П": 1}'),  # single characters
        (ISSUE, '{"Привет мир": 10, "Καλη": 4}'),  # not quoted whole
        (PAIRED, '{"미터": 1, "킬로미터": 1000}'),  # the task's own table
    ],
    ids=["one", "ascii", "characters", "not-whole", "paired"],
)
def test_tables_the_task_defines_or_of_other_keys_are_not(instruction: str, table: str) -> None:
    keys, values = _entries(table)
    assert not keyed_by_examples(keys, values, _context(instruction))
