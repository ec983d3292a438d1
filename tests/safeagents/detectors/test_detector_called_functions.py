"""Which functions of written code the tests call, and the cases asserted of each."""

from __future__ import annotations

import ast

from safeagents.detectors._asserted_cases import Case, CaseBook
from safeagents.detectors._called_functions import (
    callee_names,
    cases_of,
    functions_called,
    instruction_signatures,
)

_MODULE = ast.parse(
    "def count(a, b):\n    return a + b\n\n"
    "class Box:\n    def size(self, n):\n        return n\n\n"
    "def test_count(candidate):\n    assert candidate(1, 2) == 3\n"
)


def _book(callee: str, *calls: tuple[tuple[object, ...], object]) -> CaseBook:
    book = CaseBook()
    book.by_callee[callee] = [
        Case(callee, args, expected, f"{callee}{args!r}") for args, expected in calls
    ]
    return book


def test_the_instruction_defines_functions_with_their_parameters() -> None:
    signatures = instruction_signatures("def count(a: int, b=2) -> int:\ndef check(candidate):")
    assert signatures == {"count": ["a", "b"]}


def test_candidate_stands_for_the_instruction_s_function() -> None:
    book = _book("candidate", ((1, 2), 3), ((4, 5), 9))
    assert callee_names(book, {"count": ["a", "b"]}) == {"candidate", "count"}
    assert callee_names(book, {}) is None  # any function may be the one
    assert len(cases_of("count", 2, book, {"count": ["a", "b"]}, _MODULE)) == 2


def test_without_an_instruction_candidate_is_the_one_public_function() -> None:
    book = _book("candidate", ((1, 2), 3))
    assert len(cases_of("count", 2, book, {}, _MODULE)) == 1  # test_count is no solution
    assert cases_of("count", 3, book, {}, _MODULE) == []  # another arity


def test_methods_count_without_self() -> None:
    found = {name: params for _, params, name in functions_called(_MODULE, False, {}, None)}
    assert found == {"count": ["a", "b"], "size": ["n"], "test_count": ["candidate"]}
