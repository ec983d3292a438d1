"""The demo's live view: every tool call as the proxy records it, allowed or blocked."""

from __future__ import annotations

import heapq
import itertools
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from safeagents._actions import ToolCall
from safeagents.plugins import hookimpl
from safeagents.protocols import dialect_named
from safeagents.store import FindingRecord, TurnRecord

__all__ = ["LiveView", "call_summary", "print_summary"]

_BLOCKED_PREFIX = re.compile(r"^Blocked by safeagents \([^)]*\):\s*")
_WIDTH = 110


def _one_line(text: str, width: int = _WIDTH) -> str:
    flat = " ⏎ ".join(line for line in text.strip().splitlines() if line.strip())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def call_summary(call: ToolCall) -> str:
    """What a call does, in one line: its command, or the file it touches."""
    command = call.argument("command", "cmd", "script")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    if isinstance(command, str) and command.strip():
        return _one_line(command)
    path = call.argument("path", "filePath", "file_path")
    if isinstance(path, str):
        content = call.argument("content")
        return f"{path} ({len(content)} chars)" if isinstance(content, str) else path
    if isinstance(call.arguments, str):
        return _one_line(call.arguments)
    return _one_line(", ".join(f"{key}={value!r}" for key, value in call.arguments.items()))


class LiveView:
    """A ``turn_recorded`` sink that prints each recorded turn's calls, in recording order.

    Sinks run in worker threads, so turns are queued by their store sequence number and
    printed by :meth:`flush` from the caller's thread once they have settled.
    """

    def __init__(self, console: Console, settle: float = 0.1) -> None:
        self.console = console
        self.settle = settle
        self.received = 0
        self.allowed = 0
        self.blocked = 0
        self._lock = threading.Lock()
        self._pending: list[tuple[int, int, float, TurnRecord]] = []
        self._order = itertools.count()

    @hookimpl
    def turn_recorded(self, turn: TurnRecord) -> None:
        with self._lock:
            entry = (turn.seq, next(self._order), time.monotonic(), turn)
            heapq.heappush(self._pending, entry)
            self.received += 1

    def flush(self, *, final: bool = False) -> None:
        """Print the turns that have settled (all of them when ``final``)."""
        now = time.monotonic()
        ready: list[TurnRecord] = []
        with self._lock:
            while self._pending and (final or now - self._pending[0][2] >= self.settle):
                ready.append(heapq.heappop(self._pending)[3])
        for turn in ready:
            self._show(turn)

    def _show(self, turn: TurnRecord) -> None:
        dialect = dialect_named(turn.dialect)
        if dialect is None or turn.kind == "side" or turn.response is None:
            return
        if turn.kind == "reask":
            self.console.print(
                "  [magenta]↻ re-ask:[/] the model is asked again, with the rejection as the "
                "result of its call"
            )
        text = dialect.response_text(turn.response)
        if text:
            self.console.print(f"[bold cyan]model ›[/] {escape(_one_line(text))}")
        for call in dialect.tool_calls(turn.response):
            self._show_call(call, [f for f in turn.findings if f.tool_call_id == call.id])

    def _show_call(self, call: ToolCall, findings: Sequence[FindingRecord]) -> None:
        blocked = [finding for finding in findings if finding.blocked]
        what = f"[bold]{escape(call.name)}[/]  {escape(call_summary(call))}"
        if blocked:
            self.blocked += 1
            self.console.print(f"  [bold red]✗ blocked[/]  {what}")
            for finding in blocked:
                message = escape(_one_line(_BLOCKED_PREFIX.sub("", finding.message), 400))
                self.console.print(f"      [red]{finding.rule_id}[/]: {message}", highlight=False)
            return
        self.allowed += 1
        self.console.print(f"  [bold green]✓ allowed[/]  {what}")
        for finding in findings:
            colour = "yellow" if finding.action == "warn" else "red"
            self.console.print(
                f"      [{colour}]{finding.rule_id} ({finding.action})[/]: "
                f"{escape(_one_line(finding.summary))}",
                highlight=False,
            )


def print_summary(
    console: Console,
    session: Mapping[str, Any],
    view: LiveView,
    workspace_lines: Sequence[str],
    inspect_command: str,
) -> None:
    """The session's score, its findings, and how to look at the whole transcript."""
    hacked = bool(session.get("hacked"))
    verdict = "[bold red]hacked[/] (it tried)" if hacked else "[bold green]clean[/]"
    console.print()
    console.rule("session summary")
    console.print(
        f"session   [bold]{escape(str(session.get('id')))}[/]  ({session.get('harness')})"
    )
    console.print(f"verdict   {verdict}")
    console.print(
        f"calls     {session.get('tool_calls', 0)} tool calls: "
        f"[green]{view.allowed} allowed[/], [red]{view.blocked} blocked[/]"
    )
    for line in workspace_lines:
        console.print(f"workspace {line}")
    findings = session.get("findings") or []
    if findings:
        table = Table(show_edge=False, pad_edge=False, expand=False)
        for column in ("rule", "action", "tool", "what the call would have done"):
            table.add_column(column)
        for finding in findings:
            table.add_row(
                f"[red]{escape(str(finding['rule_id']))}[/]",
                str(finding["action"]),
                escape(str(finding["tool"])),
                escape(_one_line(str(finding["summary"]), 70)),
            )
        console.print(table)
    console.print()
    console.print("The whole conversation, blocked calls with the messages the model read:")
    console.print(f"  [bold]{escape(inspect_command)}[/]", highlight=False, soft_wrap=True)
