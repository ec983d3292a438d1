"""Compiled conditions: a small tree evaluated against one effect at a time."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "NEVER",
    "AllOf",
    "AnyOf",
    "Condition",
    "DetectorCall",
    "EqualsTest",
    "FieldTest",
    "NoneOf",
    "PatternTest",
    "SaidEarlier",
    "SessionFact",
    "TurnTest",
    "Value",
    "View",
    "detector_calls",
    "pinned_kinds",
    "required_fields",
    "said_earlier_tests",
]

Value = str | bool


class View(Protocol):
    """What a condition can ask about the effect under test."""

    def values(self, field: str) -> tuple[Value, ...]:
        """The field's values: one, none when absent, one per element for ``argv``."""

    def bits(self, field: str, position: int) -> frozenset[int]:
        """Pattern indices the ``position``-th value of ``field`` matches."""

    def detector(self, name: str) -> bool:
        """Whether the named Python detector matches."""

    def turn_meets(self, condition: Condition) -> bool:
        """Whether another effect of the same model turn satisfies ``condition``: its text's
        ``say`` effects and the effects of its tool calls (for a call's own rules: its own
        effects and the text)."""

    def session_fact(self, name: str) -> bool:
        """Whether the session model says ``name`` (see ``SESSION_FACTS``) of the effect's path."""

    def said_earlier(self, key: str) -> bool:
        """Whether a sentence of an earlier turn met the ``said_earlier:`` condition ``key``."""


class Condition:
    """Base of all condition nodes."""

    __slots__ = ()

    def holds(self, view: View) -> bool:
        raise NotImplementedError("The 'holds' method must be implemented.")


@dataclass(frozen=True, slots=True)
class AllOf(Condition):
    children: tuple[Condition, ...]

    def holds(self, view: View) -> bool:
        # Loops, not all()/any() over generators: conditions are the engine's hot path.
        for child in self.children:  # noqa: SIM110
            if not child.holds(view):
                return False
        return True


@dataclass(frozen=True, slots=True)
class AnyOf(Condition):
    children: tuple[Condition, ...]

    def holds(self, view: View) -> bool:
        for child in self.children:  # noqa: SIM110
            if child.holds(view):
                return True
        return False


@dataclass(frozen=True, slots=True)
class NoneOf(Condition):
    children: tuple[Condition, ...]

    def holds(self, view: View) -> bool:
        for child in self.children:  # noqa: SIM110
            if child.holds(view):
                return False
        return True


@dataclass(frozen=True, slots=True)
class DetectorCall(Condition):
    name: str
    file: str
    line: int
    col: int

    def holds(self, view: View) -> bool:
        return view.detector(self.name)


@dataclass(frozen=True, slots=True)
class TurnTest(Condition):
    """Some other effect of the same turn satisfies ``condition`` (``turn:`` in YAML)."""

    condition: Condition

    def holds(self, view: View) -> bool:
        return view.turn_meets(self.condition)


@dataclass(frozen=True, slots=True)
class SessionFact(Condition):
    """The session model says one of ``names`` of the effect's path."""

    names: tuple[str, ...]

    def holds(self, view: View) -> bool:
        return any(view.session_fact(name) for name in self.names)


@dataclass(frozen=True, slots=True)
class SaidEarlier(Condition):
    """A sentence the agent said in an earlier turn of the session met ``condition``.

    The engine tests ``condition`` once on each sentence as it is said and remembers ``key``
    in the session, so holding costs one set look-up whatever the session's length."""

    key: str
    condition: Condition

    def holds(self, view: View) -> bool:
        return view.said_earlier(self.key)


@dataclass(frozen=True, slots=True)
class EqualsTest:
    """The value is one of ``values``."""

    values: frozenset[Value]


@dataclass(frozen=True, slots=True)
class PatternTest:
    """The value matches at least one of the field's set patterns ``indices``."""

    indices: frozenset[int]


@dataclass(frozen=True, slots=True)
class FieldTest(Condition):
    """Some value of ``field`` passes every test (for ``argv``: the same element)."""

    field: str
    tests: tuple[EqualsTest | PatternTest, ...]

    def holds(self, view: View) -> bool:
        for position, value in enumerate(view.values(self.field)):
            for test in self.tests:
                if isinstance(test, EqualsTest):
                    if value not in test.values:
                        break
                elif test.indices.isdisjoint(view.bits(self.field, position)):
                    break
            else:
                return True
        return False


NEVER: Condition = AnyOf(())


def detector_calls(condition: Condition) -> Iterator[DetectorCall]:
    if isinstance(condition, DetectorCall):
        yield condition
    elif isinstance(condition, (AllOf, AnyOf, NoneOf)):
        for child in condition.children:
            yield from detector_calls(child)
    elif isinstance(condition, (TurnTest, SaidEarlier)):
        yield from detector_calls(condition.condition)


def said_earlier_tests(condition: Condition) -> Iterator[SaidEarlier]:
    if isinstance(condition, SaidEarlier):
        yield condition
    elif isinstance(condition, (AllOf, AnyOf, NoneOf)):
        for child in condition.children:
            yield from said_earlier_tests(child)
    elif isinstance(condition, TurnTest):
        yield from said_earlier_tests(condition.condition)


def pinned_kinds(condition: Condition) -> frozenset[str] | None:
    """Effect kinds outside of which ``condition`` cannot hold; ``None`` if any kind can."""
    if isinstance(condition, FieldTest) and condition.field == "effect":
        kinds: frozenset[str] | None = None
        for test in condition.tests:
            if isinstance(test, EqualsTest):
                allowed = frozenset(str(value) for value in test.values)
                kinds = allowed if kinds is None else kinds & allowed
        return kinds
    if isinstance(condition, AllOf):
        pinned = [p for p in map(pinned_kinds, condition.children) if p is not None]
        return frozenset.intersection(*pinned) if pinned else None
    if isinstance(condition, AnyOf):
        options = [pinned_kinds(child) for child in condition.children]
        if any(option is None for option in options):
            return None
        return frozenset().union(*(o for o in options if o is not None))
    return None


def required_fields(condition: Condition) -> frozenset[str]:
    """Fields that must have a value (not be absent) for ``condition`` to hold."""
    if isinstance(condition, FieldTest):
        return frozenset((condition.field,))
    if isinstance(condition, AllOf):
        return frozenset().union(*map(required_fields, condition.children))
    if isinstance(condition, AnyOf) and condition.children:
        return frozenset.intersection(*map(required_fields, condition.children))
    return frozenset()
