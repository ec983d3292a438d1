"""Human-readable rendering of audits, fixture runs and rule docs (rich)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from safeagents.store import print_uncut

if TYPE_CHECKING:
    from safeagents._audit import InputError, SessionReport
    from safeagents._score import Score
    from safeagents.rules import FixtureResult, Rule

__all__ = ["print_check", "print_fixtures", "print_rule", "print_score"]

_ACTION_STYLE = {"reject": "bold red", "flag": "red", "warn": "yellow"}


def print_check(
    console: Console, reports: Sequence[SessionReport], errors: Sequence[InputError]
) -> None:
    for report in reports:
        verdict = Text("HACKED", "bold red") if report.hacked else Text("clean", "green")
        withheld = report.unanalysable_calls
        header = Text.assemble(
            (report.id, "bold"),
            f"  harness={report.harness}  tool calls={report.tool_calls}  ",
            verdict,
            f"  ({withheld} unanalysable call(s) withheld)" if withheld else "",
        )
        console.print(header, soft_wrap=True)
        if report.findings:
            table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2))
            for column in ("action", "rule", "severity", "call", "tool"):
                table.add_column(column, no_wrap=True)
            table.add_column("what", no_wrap=True)
            for finding in report.findings:
                table.add_row(
                    Text(finding.action, _ACTION_STYLE.get(finding.action, "")),
                    finding.rule_id,
                    finding.severity,
                    finding.tool_call_id,
                    finding.tool,
                    finding.summary,
                )
            print_uncut(console, table)
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
        console.print(
            f"     {result.source}: {result.detail}", highlight=False, markup=False, soft_wrap=True
        )
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


def print_score(console: Console, score: Score) -> None:
    categories = Table(title="recall by category", title_justify="left", box=None)
    for column in ("category", "caught", "sessions", "recall"):
        categories.add_column(column, justify="left" if column == "category" else "right")
    for name, counts in sorted(score.per_category.items()):
        categories.add_row(
            name, str(counts["hit"]), str(counts["total"]), _ratio(counts["hit"], counts["total"])
        )
    console.print(categories)

    rules = Table(title="per rule (sessions it flagged)", title_justify="left", box=None)
    for column in ("rule", "hack", "benign", "precision"):
        rules.add_column(column, justify="left" if column == "rule" else "right")
    for rule, counts in score.per_rule.items():
        rules.add_row(
            rule,
            str(counts["tp"]),
            str(counts["fp"]),
            _ratio(counts["tp"], counts["tp"] + counts["fp"]),
        )
    print_uncut(console, rules)

    for session_id in score.misses:
        console.print(
            Text.assemble(("missed ", "yellow"), session_id), highlight=False, soft_wrap=True
        )
    for fp in score.false_positives:
        console.print(
            Text.assemble(("false positive ", "red"), fp["id"], f"  {', '.join(fp['rules'])}"),
            highlight=False,
            soft_wrap=True,
        )
    if score.contested:
        flagged = sum(c["hacked"] for c in score.contested)
        console.print(f"contested: {flagged} of {len(score.contested)} flagged (not scored)")
    console.print(
        Text(
            f"recall {_ratio(score.caught, score.hacks)} ({score.caught}/{score.hacks})  "
            f"false-positive rate {_ratio(score.flagged, score.benign)} "
            f"({score.flagged}/{score.benign})",
            style="bold",
        )
    )


def _ratio(part: int, whole: int) -> str:
    return f"{part / whole:.2f}" if whole else "-"
