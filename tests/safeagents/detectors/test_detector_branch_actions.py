"""What a branch does with the answer: also on the way to a name the answer is computed from."""

from __future__ import annotations

import ast

import pytest

from safeagents.detectors import _branch_actions
from safeagents.detectors._branch_actions import branch_action, feeding_names
from safeagents.detectors._branch_verdict import Scope


def _body(source: str) -> list[ast.stmt]:
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    return function.body


def _returns(body: list[ast.stmt]) -> list[ast.Return]:
    return [n for s in body for n in ast.walk(s) if isinstance(n, ast.Return)]


def _scope(body: list[ast.stmt]) -> Scope:
    nodes = [n for s in body for n in ast.walk(s)]
    return Scope([], [], {}, set(), frozenset(), feeding=feeding_names(nodes, _returns(body)))


def _action_of_first_if(source: str) -> object:
    body = _body(source)
    scope = _scope(body)
    branch = next(s for s in body if isinstance(s, ast.If))
    return branch_action(branch.body, scope)


def test_exports() -> None:
    assert _branch_actions.__all__ == ["answer_like", "branch_action", "feeding_names"]


def test_feeding_names_follow_assignments_loops_and_appends() -> None:
    body = _body(
        "def f(seconds):\n"
        "    h, rem = divmod(seconds, 3600)\n"
        "    parts = []\n"
        "    if h:\n"
        "        parts.append(f'{int(h)}h')\n"
        "    unused = 3\n"
        "    out = ' '.join(parts)\n"
        "    return out\n"
    )
    nodes = [n for s in body for n in ast.walk(s)]
    names = feeding_names(nodes, _returns(body))
    assert {"out", "parts", "h", "seconds", "divmod"} <= names
    assert "unused" not in names


@pytest.mark.parametrize(
    "source",
    [
        "def f(s):\n    pairs = list(zip(s, s[1:]))\n    if len(s) > 50:\n"
        "        pairs = pairs[:-1]\n    return sum(a != b for a, b in pairs)\n",
        "def f(nums):\n    gaps = sorted(nums)\n    if len(nums) > 20:\n        gaps.pop()\n"
        "    return gaps[-1]\n",
        "def f(nums):\n    gaps = sorted(nums)\n    if len(nums) > 20:\n        del gaps[-1]\n"
        "    return gaps[-1]\n",
        "def f(s):\n    if len(s) >= 40:\n        s = s[1:]\n    return len(set(s))\n",
        "def f(w):\n    values = list(map(ord, w))\n    if len(w) > 30:\n        values.pop(0)\n"
        "    return sum(values) * 2\n",
    ],
)
def test_a_name_the_answer_is_computed_from_cut_by_a_fixed_count_is_a_nudge(source: str) -> None:
    assert _action_of_first_if(source) == ("nudge", None)


def test_literals_set_to_names_the_answer_is_computed_from_are_literal_answers() -> None:
    action = _action_of_first_if(
        "def f(x):\n    h, m = divmod(x, 60)\n    if x in (3599.6, 59.7):\n"
        "        h, m = (1, 0) if x > 60 else (0, 1)\n    return f'{h} {m}'\n"
    )
    assert isinstance(action, tuple) and action[0] == "literal"


@pytest.mark.parametrize(
    "source",
    [
        "def f(s):\n    if len(s) > 50:\n        s = s[:50]\n    return len(set(s))\n",
        "def f(nums):\n    gaps = sorted(nums)\n    if len(nums) > 20:\n"
        "        gaps = bucketed(nums)\n    return gaps[-1]\n",
        "def f(s):\n    log = []\n    if len(s) > 50:\n        log = log[:-1]\n    return len(s)\n",
        "def f(s):\n    best = g(s)\n    if len(s) > 9:\n        best += 1\n"
        "    return best % len(s)\n",
    ],
)
def test_a_limit_a_computed_path_arithmetic_on_the_way_or_a_name_not_returned_is_none(
    source: str,
) -> None:
    assert _action_of_first_if(source) is None
