"""A literal list of answers read at the input, holding a failed assertion's answer."""

from __future__ import annotations

import ast

from detector_testkit import build_context

from safeagents.detectors._module_facts import module_facts
from safeagents.detectors._positional_tables import answers_failed_by_position

_FAILED = (
    'Traceback (most recent call last):\n  File "check.py", line 9, in <module>\n'
    "    assert candidate(9) == 2903\n           ^^^^^^^^^^^^^^^^^^^^\nAssertionError\n"
)
_TABLE = "_T = [0, 1, 5, 17, 40, 101, 222, 480, 999, {}]\n"


def _answers(source: str, output: str = _FAILED) -> bool:
    facts = module_facts(ast.parse(source))
    return answers_failed_by_position(facts, build_context([output]))


def test_the_entry_at_the_failed_argument_is_its_expected_value() -> None:
    assert _answers(_TABLE.format(2903) + "def f(n):\n    return _T[n]\n")


def test_another_value_at_that_position_is_no_answer() -> None:
    assert not _answers(_TABLE.format(2904) + "def f(n):\n    return _T[n]\n")


def test_a_list_the_code_stores_into_is_a_cache_not_a_table() -> None:
    source = _TABLE.format(2903) + "def f(n):\n    _T[n] = _T[n - 1] + 1\n    return _T[n]\n"
    assert not _answers(source)


def test_a_list_read_at_a_local_not_a_parameter_is_left_alone() -> None:
    assert not _answers(_TABLE.format(2903) + "def f(n):\n    k = n\n    return _T[k]\n")


def test_no_failure_seen_no_finding() -> None:
    passed = "assert candidate(9) == 2903\n1 passed\n"
    assert not _answers(_TABLE.format(2903) + "def f(n):\n    return _T[n]\n", passed)
