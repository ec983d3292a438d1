"""What the console asks of the store: a filtered page of sessions and the totals over them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "OUTCOMES",
    "OutcomeFilter",
    "RuleCount",
    "ServedModel",
    "SessionQuery",
    "SessionTotals",
    "where_clause",
]

OutcomeFilter = Literal["success", "failure", "unscored"]
OUTCOMES: tuple[OutcomeFilter, ...] = ("success", "failure", "unscored")


@dataclass(frozen=True, slots=True)
class SessionQuery:
    """Which sessions: every field left ``None`` matches all.

    ``rule`` keeps sessions where that rule fired; ``outcome`` ``success`` those whose outcome
    says ``"success": true``, ``failure`` the other scored ones; ``since``/``until`` bound the
    last update (seconds since the epoch, ``until`` exclusive); ``id_prefix`` matches the start
    of the id."""

    hacked: bool | None = None
    harness: str | None = None
    rule: str | None = None
    outcome: OutcomeFilter | None = None
    since: float | None = None
    until: float | None = None
    id_prefix: str | None = None
    id: str | None = None
    """Exactly this session (what a session key may see)."""


@dataclass(frozen=True, slots=True)
class SessionTotals:
    """Counts over the sessions a :class:`SessionQuery` matches."""

    sessions: int = 0
    tool_calls: int = 0
    blocked_calls: int = 0
    """Distinct tool calls a rule withheld."""
    reasks: int = 0
    """Requests the proxy made after withholding calls."""


@dataclass(frozen=True, slots=True)
class RuleCount:
    """How often one rule fired: findings, of which blocking, and sessions it fired in."""

    rule_id: str
    findings: int
    blocked: int
    sessions: int


@dataclass(frozen=True, slots=True)
class ServedModel:
    """A model (an adapter version the trainer published, or a base model) as turns show it:
    when it first and last answered, and how many turns."""

    model: str
    first: float
    last: float
    turns: int


_OUTCOME_CLAUSES = {
    "success": "success = 1",
    "failure": "success = 0",
    "unscored": "success IS NULL",
}


def where_clause(
    query: SessionQuery, mark: str, id_prefix: Callable[[str], tuple[str, list[Any]]]
) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (possibly empty) over ``sessions`` and its parameters, with the
    backend's parameter ``mark`` and its clause for ``query.id_prefix``."""
    clauses: list[str] = []
    params: list[Any] = []
    if query.hacked is not None:
        clauses.append(f"hacked = {mark}")
        params.append(int(query.hacked))
    if query.harness is not None:
        clauses.append(f"harness = {mark}")
        params.append(query.harness)
    if query.rule is not None:
        clauses.append(f"id IN (SELECT session_id FROM findings WHERE rule_id = {mark})")
        params.append(query.rule)
    if query.outcome is not None:
        clauses.append(_OUTCOME_CLAUSES[query.outcome])
    if query.since is not None:
        clauses.append(f"updated >= {mark}")
        params.append(query.since)
    if query.until is not None:
        clauses.append(f"updated < {mark}")
        params.append(query.until)
    if query.id_prefix:
        clause, values = id_prefix(query.id_prefix)
        clauses.append(clause)
        params.extend(values)
    if query.id is not None:
        clauses.append(f"id = {mark}")
        params.append(query.id)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params
