"""The evaluator of branch conditions: its subset, its budget, its caps, no side effects."""

from __future__ import annotations

import ast

import pytest

from safeagents.detectors import _safe_eval
from safeagents.detectors._safe_eval import MAX_LENGTH, Evaluator, Unknown


def _value(source: str, env: dict[str, object] | None = None, budget: int = 20_000) -> object:
    return Evaluator(budget).value(ast.parse(source, mode="eval").body, env or {})


def test_exports() -> None:
    assert _safe_eval.__all__ == ["MAX_LENGTH", "MAX_STEPS", "Evaluator", "Unknown"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("len(grid) == 2 and sum(map(sum, grid)) == 3", True),
        ("s[len(s) // 2 - 1] == s[len(s) // 2 - 2]", False),
        ("sorted(set(s))[:2]", ["a", "b"]),
        ("{k: v for k, v in zip(s, range(3)) if v}", {"b": 1, "c": 2}),
        ("any(c.isdigit() for c in s)", False),
        ("(len(s), s.count('a'), s.upper())", (3, 1, "ABC")),
        ("10**6 + 3 if len(grid) > 1 else -1", 1_000_003),
        ("s in {'abc': 1}", True),
        ("{'abc': 7}.get(s, 0)", 7),
        ("[row[0] for row in grid]", [1, 0]),
        ("max(len(r) for r in grid) * 2", 4),
    ],
)
def test_the_subset_evaluates(source: str, expected: object) -> None:
    assert _value(source, {"s": "abc", "grid": [[1, 1], [0, 1]]}) == expected


@pytest.mark.parametrize(
    "source",
    [
        "open('x')",
        "__import__('os')",
        "s.__class__",
        "solve(s)",
        "(lambda: 1)()",
        "xs.append(1)",
        "xs.sort()",
        "d.update({})",
        "undefined + 1",
        "[*xs]",
        "f'{s}'",
        "xs[10]",
        "1 / 0",
        "len(3)",
        "d['missing']",
    ],
)
def test_anything_else_is_unknown(source: str) -> None:
    with pytest.raises(Unknown):
        _value(source, {"s": "abc", "xs": [1], "d": {}})


@pytest.mark.parametrize(
    "source",
    [
        "10 ** 100000",
        "2 ** 2 ** 2 ** 2 ** 2",
        "1 << 100000",
        "'a' * 10**6",
        "[0] * 10**6",
        "list(range(10**7))",
        "'ab' * 5000 + 'c' * 5000",
    ],
)
def test_values_over_the_caps_are_unknown(source: str) -> None:
    with pytest.raises(Unknown):
        _value(source)


def test_the_step_budget_stops_long_work() -> None:
    nested = "sum(1 for a in range(100) for b in range(100) for c in range(100))"
    with pytest.raises(Unknown):
        _value(nested)
    assert _value("sum(1 for a in range(50))", budget=1_000) == 50
    with pytest.raises(Unknown):
        _value("sum(1 for a in range(50))", budget=20)


def test_the_budget_is_shared_by_the_evaluations_of_one_evaluator() -> None:
    evaluator = Evaluator(1_000)
    node = ast.parse("sum(1 for a in range(100))", mode="eval").body
    assert evaluator.value(node, {}) == 100
    with pytest.raises(Unknown):
        for _ in range(5):
            evaluator.value(node, {})


def test_the_environment_is_never_changed() -> None:
    env: dict[str, object] = {"xs": [3, 1, 2], "d": {"a": 1}}
    assert _value("sorted(xs)", env) == [1, 2, 3]
    assert _value("[x for x in xs if x > 1]", env) == [3, 2]
    assert _value("list(d.items())", env) == [("a", 1)]
    assert env == {"xs": [3, 1, 2], "d": {"a": 1}}
    assert "x" not in env


def test_a_long_string_is_within_the_cap() -> None:
    assert _value("len('a' * n)", {"n": MAX_LENGTH}) == MAX_LENGTH


@pytest.mark.parametrize(
    "source",
    [
        "'x' * 9000 .join(['a'] * 9000)",
        "('a' * 9000).replace('a', 'b' * 9000)",
        "sum([[1] * 5000] * 5000, [])",
    ],
)
def test_methods_and_sums_that_would_grow_past_the_caps_are_unknown(source: str) -> None:
    with pytest.raises(Unknown):
        _value(source)
