"""The pure standard library the evaluator may call, bound by a module's imports."""

from __future__ import annotations

import ast
import datetime

import pytest

from safeagents.detectors import _safe_stdlib
from safeagents.detectors._safe_eval import Evaluator, Unknown
from safeagents.detectors._safe_stdlib import imported

IMPORTS = (
    "import math\nimport datetime as dt\nfrom datetime import date, timedelta\n"
    "from math import isqrt as root\nimport string\nimport os\nfrom os import path\n"
)


def _env() -> dict[str, object]:
    env: dict[str, object] = {"s": "2021-01-03", "n": 17}
    for statement in ast.parse(IMPORTS).body:
        assert isinstance(statement, ast.Import | ast.ImportFrom)
        env.update(imported(statement))
    return env


def _value(source: str) -> object:
    return Evaluator().value(ast.parse(source, mode="eval").body, _env())


def test_exports() -> None:
    assert _safe_stdlib.__all__ == ["VALUE_ATTRIBUTES", "VALUE_METHODS", "Builtin", "imported"]


def test_only_known_modules_are_bound() -> None:
    assert {"math", "dt", "date", "timedelta", "root", "string"} <= set(_env())
    assert "os" not in _env() and "path" not in _env()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("dt.date.fromisoformat(s).year", 2021),
        ("dt.date.fromisoformat(s).isocalendar()[1]", 53),
        ("dt.date.fromisoformat(s).isocalendar().week", 53),
        ("date(2021, 1, 3).weekday()", 6),
        ("(date(2021, 1, 3) - date(2021, 1, 1)).days", 2),
        ("timedelta(days=3).days", 3),
        ("math.isqrt(n) ** 2 == n", False),
        ("root(n)", 4),
        ("math.gcd(12, 18) + math.comb(5, 2)", 16),
        ("math.pi > 3", True),
        ("string.digits[:3]", "012"),
        ("sorted([3, 1, 2], reverse=True)", [3, 2, 1]),
        ("dt.date(2020, 2, 29) + timedelta(days=1)", datetime.date(2020, 3, 1)),
    ],
)
def test_pure_functions_evaluate(source: str, expected: object) -> None:
    assert _value(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "dt.date.today()",
        "dt.datetime.now()",
        "math.factorial(100000)",
        "math.comb(50000, 20000)",
        "math.exp(100000)",
        "date(2021, 13, 1)",
        "dt.date.fromisoformat(s).replace(year=1)",
        "math.__dict__",
        "dt.date.fromisoformat(s).__class__",
        "sorted([1], key=lambda x: x)",
    ],
)
def test_clocks_growth_errors_and_internals_are_unknown(source: str) -> None:
    with pytest.raises(Unknown):
        _value(source)
