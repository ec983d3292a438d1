"""Human-readable listings of stored sessions (``safeagents sessions list|show``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.segment import Segment, Segments
from rich.table import Table
from rich.text import Text

from safeagents.store._records import SessionRecord, TurnRecord
from safeagents.store._transcript import export_line

__all__ = ["content_text", "outcome_summary", "print_session", "print_sessions", "print_uncut"]

_ACTION_STYLE = {"reject": "bold red", "flag": "red", "warn": "yellow"}


def _when(timestamp: float) -> str:
    moment = datetime.fromtimestamp(timestamp, tz=UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _verdict(session: SessionRecord) -> Text:
    return Text("HACKED", "bold red") if session.hacked else Text("clean", "green")


def outcome_summary(session: SessionRecord) -> str:
    """``success=…, reward=…, score=…`` (those present), ``scored`` or ``not scored``."""
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
            outcome_summary(session),
            _when(session.updated),
        )
    print_uncut(console, table)
    hacked = sum(session.hacked for session in sessions)
    console.print(Text(f"{len(sessions)} session(s), {hacked} hacked", "bold"))


def print_uncut(console: Console, table: Table) -> None:
    """``table`` at its natural width, whatever the console's: ids and paths are never cut
    (a narrow terminal wraps the lines; piped output stays one row a line)."""
    natural = console.measure(table, options=console.options.update_width(_UNLIMITED)).maximum
    options = console.options.update_width(max(console.width, natural))
    lines = console.render_lines(table, options, pad=False)
    segments = Segments(segment for line in lines for segment in (*line, Segment.line()))
    console.print(segments, end="", crop=False, soft_wrap=True)


def print_session(console: Console, session: SessionRecord, turns: Sequence[TurnRecord]) -> None:
    """The conversation as the model saw it: text, tool calls (blocked ones with the rule and
    the message the model read), tool results; then every finding."""
    console.print(
        Text.assemble(
            (session.id, "bold"),
            f"  harness={session.harness}  dialect={session.dialect}  "
            f"tool calls={session.tool_calls}  turns={len(turns)}  "
            f"outcome: {outcome_summary(session)}  ",
            _verdict(session),
        ),
        soft_wrap=True,
    )
    blocked = {f.tool_call_id: f for f in session.findings if f.blocked}
    messages = export_line(session, turns)["messages"]
    rejections = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    for message in messages:
        role = str(message.get("role") or "?")
        call_id = message.get("tool_call_id")
        if role == "tool" and call_id in blocked:
            continue  # shown with its call
        console.print()
        label = f"{role} ({call_id})" if role == "tool" else role
        console.print(Text(label, _ROLE_STYLE.get(role, "bold")))
        text = content_text(message.get("content"))
        if text:
            console.print(Text(_clip_lines(text)), soft_wrap=True, highlight=False)
        for call in message.get("tool_calls") or ():
            _print_call(console, call, blocked, rejections)
    if session.findings:
        console.print()
        console.print(Text("findings", "bold"))
    for finding in session.findings:
        console.print(
            Text.assemble(
                (f"{finding.action:<7}", _ACTION_STYLE.get(finding.action, "")),
                f"{finding.rule_id}  {finding.tool} {finding.tool_call_id}: {finding.summary}",
            ),
            highlight=False,
            soft_wrap=True,
        )
    console.print()
    console.print(
        Text(
            f"the last conversation of {len(turns)} turn(s); --format json gives every turn "
            "with its full request and answer",
            "dim",
        ),
        soft_wrap=True,
    )


_UNLIMITED = 1 << 20
_ROLE_STYLE = {"user": "bold cyan", "assistant": "bold green", "tool": "bold", "system": "dim"}
_MAX_LINES = 20


def _print_call(
    console: Console, call: Mapping[str, Any], blocked: Mapping[str, Any], rejections: set[Any]
) -> None:
    function = call.get("function") or {}
    arguments = function.get("arguments", "")
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call_id = str(call.get("id") or "")
    line = Text.assemble(("-> ", "bold"), (str(function.get("name") or "?"), "bold"))
    line.append(f" ({call_id}) {_clip_lines(shown)}")
    finding = blocked.get(call_id)
    if finding is not None:
        line.append(f"  BLOCKED {finding.action} {finding.rule_id}", "bold red")
    console.print(line, soft_wrap=True, highlight=False)
    if finding is not None and call_id in rejections:
        console.print(Text(f"   the model read: {finding.message}", "red"), soft_wrap=True)


def content_text(content: Any) -> str:
    """A chat message's content as text (parts joined by newlines)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(p.get("text", "")) for p in content if isinstance(p, Mapping)]
        return "\n".join(part for part in parts if part)
    return "" if content is None else json.dumps(content)


def _clip_lines(text: str) -> str:
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= _MAX_LINES:
        return "\n".join(lines)
    more = len(lines) - _MAX_LINES
    return "\n".join([*lines[:_MAX_LINES], f"… {more} more line(s) (--format json has all)"])
