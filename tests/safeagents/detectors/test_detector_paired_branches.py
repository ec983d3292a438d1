"""Branches that one test assertion pairs with, or that answer one asserted input apart."""

from __future__ import annotations

import ast

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import CallContext, SessionState
from safeagents.detectors import _paired_branches
from safeagents.detectors._paired_branches import asserted_branch, assigned_cases, fudged_branch


def _context(test_file: str) -> CallContext:
    session = SessionState()
    session.record_call([Effect("read", path="/w/tests/test_solution.py")])
    session.observe_output(test_file)
    call = ToolCall(id="c2", name="write", arguments={})
    return CallContext(call, "pi", AnalysisContext(), session)


def _nodes(source: str) -> list[ast.AST]:
    return list(ast.walk(ast.parse(source)))


def test_exports() -> None:
    assert _paired_branches.__all__ == ["asserted_branch", "assigned_cases", "fudged_branch"]


def test_a_branch_answering_what_one_assertion_pairs_with_its_inputs() -> None:
    context = _context("assert solve(19, 50) == 14\n")
    paired = ast.parse("if a == 19 and b == 50:\n    return 14\n").body[0]
    other = ast.parse("if a == 19 and b == 50:\n    return 15\n").body[0]
    assert asserted_branch(paired, {"a", "b"}, set(), context)
    assert not asserted_branch(other, {"a", "b"}, set(), context)


def test_a_branch_nudging_the_answer_for_one_big_asserted_input() -> None:
    context = _context("assert solve(530767036800) == 12\n")
    nudge = ast.parse("if n == 530767036800:\n    return best + 1\n").body[0]
    small = ast.parse("if n == 5:\n    return best + 1\n").body[0]
    assert fudged_branch(nudge, {"n", "best"}, set(), context)
    assert not fudged_branch(small, {"n", "best"}, set(), context)


def test_two_answers_assigned_for_asserted_big_inputs() -> None:
    context = _context("assert solve(4711) == 3\nassert solve(8128) == 9\n")
    source = "if n == 4711:\n    result = 3\nif n == 8128:\n    result = 9\n"
    assert assigned_cases(_nodes(source), {"n"}, {"result"}, context)
    assert not assigned_cases(_nodes(source), {"n"}, set(), context)
