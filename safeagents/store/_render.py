"""Human-readable listings of stored sessions (``safeagents sessions list|show``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from rich.console import Console
from rich.table import Table
from rich.text import Text

from safeagents.store._records import SessionRecord, TurnRecord

__all__ = ["print_session", "print_sessions"]

_ACTION_STYLE = {"reject": "bold red", "flag": "red", "warn": "yellow"}


def _when(timestamp: float) -> str:
    moment = datetime.fromtimestamp(timestamp, tz=UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _verdict(session: SessionRecord) -> Text:
    return Text("HACKED", "bold red") if session.hacked else Text("clean", "green")


def _outcome(session: SessionRecord) -> str:
    if session.outcome is None:
        return "not scored"
    keys = ("success", "reward", "score")
    shown = [f"{key}={session.outcome[key]}" for key in keys if key in session.outcome]
    return ", ".join(shown) or "scored"


def print_sessions(console: Console, sessions: Sequence[SessionRecord]) -> None:
    table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2))
    for column in ("session", "harness", "verdict", "calls", "turns", "outcome", "updated"):
        table.add_column(column, no_wrap=True)
    for session in sessions:
        table.add_row(
            session.id,
            session.harness,
            _verdict(session),
            str(session.tool_calls),
            str(session.turns),
            _outcome(session),
            _when(session.updated),
        )
    console.print(table)
    hacked = sum(session.hacked for session in sessions)
    console.print(Text(f"{len(sessions)} session(s), {hacked} hacked", "bold"))


def print_session(console: Console, session: SessionRecord, turns: Sequence[TurnRecord]) -> None:
    console.print(
        Text.assemble(
            (session.id, "bold"),
            f"  harness={session.harness}  dialect={session.dialect}  "
            f"tool calls={session.tool_calls}  outcome: {_outcome(session)}  ",
            _verdict(session),
        )
    )
    table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2))
    for column in ("seq", "kind", "status", "model", "seconds", "findings"):
        table.add_column(column, no_wrap=True)
    for turn in turns:
        findings = Text()
        for finding in turn.findings:
            findings.append(f"{finding.rule_id} ", _ACTION_STYLE.get(finding.action, ""))
        table.add_row(
            str(turn.seq),
            turn.kind,
            turn.status if turn.error is None else f"{turn.status}: {turn.error[:60]}",
            turn.model,
            f"{turn.duration:.2f}",
            findings,
        )
    console.print(table)
    for finding in session.findings:
        console.print(
            Text.assemble(
                (f"{finding.action:<7}", _ACTION_STYLE.get(finding.action, "")),
                f"{finding.rule_id}  {finding.tool} {finding.tool_call_id}: {finding.summary}",
            ),
            highlight=False,
        )
