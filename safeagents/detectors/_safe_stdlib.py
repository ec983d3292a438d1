"""The pure parts of the standard library that :mod:`._safe_eval` may call: ``math``,
``datetime``'s dates and ``string``'s constants, bound by a module's imports.

Solution code reads its inputs through them (``dt.date.fromisoformat(s).year``,
``math.isqrt(n)``), so a branch on such a value is only judged when they evaluate. Only
functions without side effects or clocks are here (no ``date.today()``), and those whose
result grows with their argument refuse arguments past a cap.
"""

from __future__ import annotations

import ast
import datetime
import math
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["VALUE_ATTRIBUTES", "VALUE_METHODS", "Builtin", "imported"]

_MAX_ARGUMENT = 10_000
"""Largest argument of ``factorial``, ``comb`` and ``perm``, whose results grow with it."""


@dataclass(frozen=True, slots=True)
class Builtin:
    """A callable the evaluator may call (``function``), or a namespace of such members
    (a module, or a class with constructors: ``date.fromisoformat``), or both."""

    function: Callable[..., Any] | None
    members: Mapping[str, object] = field(default_factory=dict)


def _capped(function: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        if any(isinstance(arg, int) and abs(arg) > _MAX_ARGUMENT for arg in args):
            raise OverflowError("argument over the cap")
        return function(*args)

    return call


def _namespace(owner: object, names: str, **extra: object) -> Builtin:
    members: dict[str, object] = {}
    for name in names.split():
        member = getattr(owner, name)
        members[name] = Builtin(member) if callable(member) else member
    members.update(extra)
    return Builtin(owner if callable(owner) else None, members)


_DATE = _namespace(datetime.date, "fromisoformat fromordinal min max")
_DATETIME = _namespace(datetime.datetime, "fromisoformat combine min max")
_MODULES: dict[str, Builtin] = {
    "math": _namespace(
        math,
        "gcd lcm isqrt sqrt floor ceil trunc fabs log log2 log10 exp hypot prod fsum copysign"
        " isclose isfinite isinf isnan radians degrees sin cos tan atan atan2 pi e inf tau",
        factorial=Builtin(_capped(math.factorial)),
        comb=Builtin(_capped(math.comb)),
        perm=Builtin(_capped(math.perm)),
    ),
    "datetime": Builtin(
        None,
        {"date": _DATE, "datetime": _DATETIME, "timedelta": Builtin(datetime.timedelta)},
    ),
    "string": _namespace(
        string, "ascii_lowercase ascii_uppercase ascii_letters digits hexdigits punctuation"
    ),
}

VALUE_ATTRIBUTES: dict[type, frozenset[str]] = {
    datetime.date: frozenset({"year", "month", "day"}),
    datetime.datetime: frozenset({"year", "month", "day", "hour", "minute", "second"}),
    datetime.timedelta: frozenset({"days", "seconds"}),
    type(datetime.date(2000, 1, 1).isocalendar()): frozenset({"year", "week", "weekday"}),
}
"""Fields of the values those functions return, by exact type."""

VALUE_METHODS: dict[type, frozenset[str]] = {
    datetime.date: frozenset({"weekday", "isoweekday", "isocalendar", "toordinal", "isoformat"}),
    datetime.datetime: frozenset({"weekday", "isoweekday", "isocalendar", "date", "isoformat"}),
    datetime.timedelta: frozenset({"total_seconds"}),
}


def imported(statement: ast.Import | ast.ImportFrom) -> dict[str, object]:
    """The names ``statement`` binds to modules or members the evaluator knows."""
    bound: dict[str, object] = {}
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.name in _MODULES:
                bound[alias.asname or alias.name] = _MODULES[alias.name]
        return bound
    module = _MODULES.get(statement.module or "") if statement.level == 0 else None
    members = module.members if module is not None else {}
    for alias in statement.names:
        if alias.name in members:
            bound[alias.asname or alias.name] = members[alias.name]
    return bound
