"""What the console reads from: the store, the firewall (rules, harness plugins), credentials."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape

from safeagents._firewall import Firewall
from safeagents.exchange import Credentials
from safeagents.plugins import ConsoleSection
from safeagents.store import SessionRecord, Store, outcome_summary

__all__ = ["STATIC", "ConsoleSource", "SourceGetter", "templates"]

STATIC = Path(__file__).parent / "static"


@dataclass(frozen=True, slots=True)
class ConsoleSource:
    """The console's data: in the proxy its live services, standalone a store opened read-only
    in spirit (the console never writes)."""

    store: Store
    firewall: Firewall
    credentials: Credentials


SourceGetter = Callable[[], ConsoleSource]
"""Called per request: the proxy builds its services in its lifespan, after the app."""


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def _blocked(session: SessionRecord) -> int:
    return len({f.tool_call_id for f in session.findings if f.blocked})


def _rules_fired(session: SessionRecord) -> list[str]:
    return sorted({f.rule_id for f in session.findings})


def templates(sections: tuple[ConsoleSection, ...]) -> Environment:
    environment = Environment(
        loader=PackageLoader("safeagents.console", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(
        when=_when, outcome=outcome_summary, blocked=_blocked, rules=_rules_fired
    )
    environment.globals["sections"] = sections
    return environment
