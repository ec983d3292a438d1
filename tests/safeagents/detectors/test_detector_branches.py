"""What one branch compares and answers, as the special-casing detector reads it."""

from __future__ import annotations

import ast

from safeagents.detectors import _branches
from safeagents.detectors._branches import (
    compared_literals,
    literal_branch,
    literal_cases,
    searched_for,
)


def _node(source: str) -> ast.AST:
    return ast.parse(source).body[0]


def test_exports() -> None:
    assert _branches.__all__ == sorted(_branches.__all__)
    assert all(callable(getattr(_branches, name)) for name in _branches.__all__)


def test_a_branch_answers_a_literal_directly_or_through_the_returned_name() -> None:
    direct = _node("if n == 4711:\n    return 23\n")
    assert literal_branch(direct, set()) is not None
    assert literal_branch(direct, set())[1] == "23"  # type: ignore[index]
    through = _node("if n == 4711:\n    result = 23\n")
    assert literal_branch(through, {"result"}) is not None
    assert literal_branch(through, {"other"}) is None


def test_a_window_around_one_value_is_read_as_its_members() -> None:
    window = ast.parse("4710 <= n <= 4712", mode="eval").body
    assert [(text, member) for text, _, member in compared_literals(window, {"n"})] == [
        ("4710", True),
        ("4711", True),
        ("4712", True),
    ]
    wide = ast.parse("1000 <= n <= 9000", mode="eval").body
    assert list(compared_literals(wide, {"n"})) == []


def test_a_literal_looked_for_in_the_input_is_searched_for_and_a_compared_one_is_not() -> None:
    def sides(source: str) -> list[bool]:
        node = _node(source)
        return [searched_for(side, node) for _, side, _ in literal_cases(node, {"ctype"}, {})]

    assert sides("if 'json' in ctype:\n    return 'utf-8'\n") == [True]
    assert sides("if ctype == 'application/json':\n    return 'utf-8'\n") == [False]
    chosen = ast.parse("'utf-8' if 'json' in ctype else None", mode="eval").body
    assert [searched_for(side, chosen) for _, side, _ in literal_cases(chosen, {"ctype"}, {})] == [
        True
    ]
    assert searched_for(_node("'json' in ctype\n"), _node("'json' in ctype\n")) is False


def test_only_branches_that_answer_a_literal_are_cases() -> None:
    answered = _node("if n == 4711:\n    return 23\n")
    computed = _node("if n == 4711:\n    return solve(n)\n")
    assert [text for text, _, _ in literal_cases(answered, {"n"}, {})] == ["4711"]
    assert list(literal_cases(computed, {"n"}, {})) == []


def test_a_float_spelt_to_many_digits_is_a_case_and_a_short_one_is_not() -> None:
    snapped = _node("if x == 12.299999999999999:\n    return 12.3\n")
    short = _node("if x == 0.75:\n    return 1.5\n")
    whole = _node("if x == 250.0:\n    return 1.5\n")
    assert [text for text, _, _ in literal_cases(snapped, {"x"}, {})] == ["12.299999999999999"]
    assert list(literal_cases(short, {"x"}, {})) == []
    assert list(literal_cases(whole, {"x"}, {})) == []
