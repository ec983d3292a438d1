"""Human-readable rendering of audits, fixture runs and rule docs (rich)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from safeagents._audit import InputError, SessionReport
    from safeagents.rules import FixtureResult, Rule

__all__ = ["print_check", "print_fixtures", "print_rule"]

_ACTION_STYLE = {"reject": "bold red", "flag": "red", "warn": "yellow"}


def print_check(
    console: Console, reports: Sequence[SessionReport], errors: Sequence[InputError]
) -> None:
    for report in reports:
        verdict = Text("HACKED", "bold red") if report.hacked else Text("clean", "green")
        header = Text.assemble(
            (report.id, "bold"),
            f"  harness={report.harness}  tool calls={report.tool_calls}  ",
            verdict,
        )
        console.print(header)
        if report.findings:
            table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2))
            for column in ("action", "rule", "severity", "call", "tool"):
                table.add_column(column, no_wrap=True)
            table.add_column("what", overflow="fold")
            for finding in report.findings:
                table.add_row(
                    Text(finding.action, _ACTION_STYLE.get(finding.action, "")),
                    finding.rule_id,
                    finding.severity,
                    finding.tool_call_id,
                    finding.tool,
                    finding.summary,
                )
            console.print(table)
        console.print()
    hacked = sum(r.hacked for r in reports)
    calls = sum(r.tool_calls for r in reports)
    summary = f"{len(reports)} session(s), {calls} tool call(s), {hacked} hacked"
    if errors:
        summary += f", {len(errors)} input error(s) skipped"
    console.print(Text(summary, "bold red" if hacked or errors else "bold green"))


def print_fixtures(console: Console, results: Sequence[FixtureResult]) -> None:
    failed = [r for r in results if not r.passed]
    for result in failed:
        console.print(
            Text.assemble(("FAIL ", "bold red"), f"{result.rule_id} :: {result.case}"),
            highlight=False,
        )
        console.print(f"     {result.source}: {result.detail}", highlight=False, markup=False)
    rules = len({r.rule_id for r in results})
    style = "bold red" if failed else "bold green"
    console.print(
        Text(f"{len(results) - len(failed)} passed, {len(failed)} failed ({rules} rules)", style)
    )


def print_rule(console: Console, rule: Rule) -> None:
    meta = (
        f"[bold]{rule.id}[/]  pack={rule.pack}  category={rule.category}  "
        f"severity={rule.severity}  action=[{_ACTION_STYLE.get(rule.action, '')}]{rule.action}[/]"
    )
    console.print(meta)
    console.print(f"[dim]{rule.source}[/]")
    console.print(Markdown(rule.description))
    console.print(Panel(rule.message, title="message the model reads", expand=False))
