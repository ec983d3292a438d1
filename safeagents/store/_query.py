"""What the console asks of the store: a filtered page of sessions and the totals over them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "OUTCOMES",
    "OutcomeFilter",
    "RuleCount",
    "ServedModel",
    "SessionQuery",
    "SessionTotals",
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
