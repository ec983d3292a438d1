"""Which rules an effect must evaluate: the pattern hits a condition cannot hold without.

One RE2 set scan per field finds every pattern a value matches; a rule is evaluated only
when the scans hit each of its clauses. Skipping the others changes no result: a clause
is a pattern hit that every effect meeting the condition has.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Protocol

from safeagents._actions import EFFECT_KINDS
from safeagents.rules._tree import (
    AllOf,
    AnyOf,
    Condition,
    EqualsTest,
    FieldTest,
    PatternTest,
    Value,
    required_fields,
)

__all__ = [
    "Clause",
    "Gate",
    "KindPlan",
    "Scanned",
    "kind_plans",
    "required_hits",
]

Clause = frozenset[tuple[str, int]]
"""``(field, pattern index)`` hits at least one of which must occur."""

MAX_CLAUSES = 64
"""An ``any:`` whose clauses multiply out to more than this is summed up by one clause."""


class Scanned(Protocol):
    """An effect as the plan reads it."""

    def values(self, field: str) -> tuple[Value, ...]:
        """The field's values (none when absent)."""

    def hits(self, field: str) -> frozenset[int]:
        """Pattern indices any value of ``field`` matches."""


def required_hits(condition: Condition, kind: str | None) -> tuple[Clause, ...] | None:
    """Clauses that an effect of ``kind`` must each hit for ``condition`` to hold (``()``
    when none is known), or ``None`` when no effect of ``kind`` can meet ``condition``."""
    if isinstance(condition, FieldTest):
        return _field_clauses(condition, kind)
    if isinstance(condition, AllOf):
        clauses: list[Clause] = []
        for child in condition.children:
            found = required_hits(child, kind)
            if found is None:
                return None
            clauses.extend(found)
        return tuple(dict.fromkeys(clauses))
    if isinstance(condition, AnyOf):
        return _any_clauses([required_hits(child, kind) for child in condition.children])
    return ()


def _field_clauses(condition: FieldTest, kind: str | None) -> tuple[Clause, ...] | None:
    for test in condition.tests:
        if condition.field == "effect" and isinstance(test, EqualsTest) and kind not in test.values:
            return None
    return tuple(
        frozenset((condition.field, index) for index in test.indices)
        for test in condition.tests
        if isinstance(test, PatternTest)
    )


def _any_clauses(options: list[tuple[Clause, ...] | None]) -> tuple[Clause, ...] | None:
    """(a1 and a2) or (b1 and b2) needs (a1 or b1), (a1 or b2), (a2 or b1) and (a2 or b2)."""
    possible = [option for option in options if option is not None]
    if not possible:
        return None
    if not all(possible):
        return ()
    count = 1
    for option in possible:
        count *= len(option)
    if count > MAX_CLAUSES:
        return (frozenset().union(*(min(option, key=len) for option in possible)),)
    return tuple(dict.fromkeys(frozenset().union(*choice) for choice in product(*possible)))


@dataclass(frozen=True, slots=True)
class Gate:
    """Clauses that must all be hit: those on one field grouped by it (``single``), the
    narrowest (likeliest to miss) first; ``mixed`` as ``(field, pattern indices)`` pairs."""

    single: tuple[tuple[str, tuple[frozenset[int], ...]], ...]
    mixed: tuple[tuple[tuple[str, frozenset[int]], ...], ...]

    @classmethod
    def of(cls, clauses: Iterable[Clause]) -> Gate:
        single: dict[str, list[frozenset[int]]] = {}
        mixed: list[tuple[tuple[str, frozenset[int]], ...]] = []
        for clause in sorted(clauses, key=len):
            names = sorted({name for name, _ in clause})
            if len(names) == 1:
                single.setdefault(names[0], []).append(frozenset(i for _, i in clause))
            else:
                mixed.append(tuple((n, frozenset(i for f, i in clause if f == n)) for n in names))
        return cls(tuple((n, tuple(c)) for n, c in single.items()), tuple(mixed))

    def open(self, view: Scanned) -> bool:
        for name, clauses in self.single:
            if any(map(view.hits(name).isdisjoint, clauses)):
                return False
        return all(
            any(not view.hits(name).isdisjoint(bits) for name, bits in clause)
            for clause in self.mixed
        )


@dataclass(slots=True)
class KindPlan:
    """Which rules an effect of one kind must evaluate: always (when the fields they need
    have values), or when a pattern of their narrowest clause hit and so did one of each of
    their other clauses (``gates``) on fields the plan scans anyway."""

    always: dict[tuple[str, ...], list[int]] = field(default_factory=dict)
    triggers: dict[str, dict[int, list[int]]] = field(default_factory=dict)
    gates: dict[int, Gate] = field(default_factory=dict)

    def candidates(self, view: Scanned) -> list[int]:
        """Indices of the rules ``view`` must evaluate, in order."""
        found: set[int] = set()
        for needed, indices in self.always.items():
            if all(view.values(name) for name in needed):
                found.update(indices)
        for field_name, by_index in self.triggers.items():
            for index in view.hits(field_name):
                found.update(by_index.get(index, ()))
        gates = self.gates
        return sorted(i for i in found if i not in gates or gates[i].open(view))

    @classmethod
    def of(cls, conditions: Sequence[Condition], kind: str | None) -> KindPlan:
        """The plan of effects of ``kind`` for the rules whose conditions are ``conditions``,
        by position."""
        plan = cls()
        rest: dict[int, list[Clause]] = {}
        for index, condition in enumerate(conditions):
            clauses = required_hits(condition, kind)
            if clauses is None:
                continue
            if clauses:
                rest[index] = plan._index(index, clauses)
                continue
            needed = tuple(sorted(required_fields(condition) - {"effect"}))
            plan.always.setdefault(needed, []).append(index)
        for index, others in rest.items():
            plan._gate(index, others)
        return plan

    def _index(self, index: int, clauses: tuple[Clause, ...]) -> list[Clause]:
        first, *rest = sorted(clauses, key=len)
        for field_name, bit in first:
            self.triggers.setdefault(field_name, {}).setdefault(bit, []).append(index)
        return rest

    def _gate(self, index: int, clauses: list[Clause]) -> None:
        scanned = [c for c in clauses if all(name in self.triggers for name, _ in c)]
        if scanned:
            self.gates[index] = Gate.of(scanned)


def kind_plans(conditions: Sequence[Condition]) -> dict[str | None, KindPlan]:
    """:meth:`KindPlan.of` each effect kind, and of ``None``: a kind the rules do not know."""
    return {kind: KindPlan.of(conditions, kind) for kind in (*EFFECT_KINDS, None)}
