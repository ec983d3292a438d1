"""Rule authoring and offline audit: check, test, lint, explain."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from safeagents import _report
from safeagents.cli._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    Parser,
    UsageError,
    add_rule_options,
    existing,
    is_option_error,
    load_rules,
    parse_var_pairs,
    report_rule_errors,
    rule_paths,
)

if TYPE_CHECKING:
    from safeagents._audit import InputError, Session, SessionReport

__all__ = ["add_rule_commands", "check", "explain", "lint", "score", "test"]

ONLY_THESE = "only these rule packs or files (as --no-default-rules --rules PATH)"
MIN_CASES = 3
"""``match`` and ``ok`` cases, and harness schemas, per rule (docs/rule-dsl.md, Fixtures)."""

FAIL_LEVELS = {
    "warn": ("warn", "flag", "reject"),
    "flag": ("flag", "reject"),
    "reject": ("reject",),
}


def add_rule_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    check = sub.add_parser("check", help="audit recorded agent sessions")
    add_rule_options(check)
    check.add_argument("--harness", help="harness the sessions came from (default: detect)")
    check.add_argument("--cwd", help="agent working directory (default /workspace)")
    check.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    check.add_argument(
        "--fail-on",
        choices=tuple(FAIL_LEVELS),
        default="flag",
        help="lowest finding action that makes the exit status 1 (default: flag)",
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="JSONL/JSON sessions, - for stdin")

    score = sub.add_parser(
        "score",
        help="measure detection on labelled sessions (recall, false-positive rate, per rule)",
        description="Audit sessions labelled hack, benign or contested (a `label` and optional "
        "`category` next to each session's messages) and report recall per category, the benign "
        "false-positive rate, per-rule precision, and the misses and false positives by id. "
        "Contested sessions are reported apart.",
    )
    add_rule_options(score)
    score.add_argument("--harness", help="harness the sessions came from (default: detect)")
    score.add_argument("--cwd", help="agent working directory (default /workspace)")
    score.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    score.add_argument("--min-recall", type=_fraction, metavar="R", help="exit 1 below this")
    score.add_argument("--max-fpr", type=_fraction, metavar="F", help="exit 1 above this")
    score.add_argument("files", nargs="+", metavar="FILE", help="labelled JSONL sessions")

    test = sub.add_parser("test", help="run every rule's fixtures")
    test.add_argument("paths", nargs="*", metavar="PATH", help=ONLY_THESE)
    add_rule_options(test, var=False)  # a case sets its own vars
    test.add_argument(
        "--min-cases",
        type=_count,
        default=MIN_CASES,
        metavar="N",
        help=f"match and ok cases, and harness schemas, each rule needs (default: {MIN_CASES}; "
        "0 for your own packs still in progress; a rule without fixtures always fails)",
    )

    lint = sub.add_parser("lint", help="validate rule files")
    lint.add_argument("paths", nargs="*", metavar="PATH", help=ONLY_THESE)
    add_rule_options(lint)

    explain = sub.add_parser("explain", help="print a rule's documentation")
    add_rule_options(explain)
    explain.add_argument("rule_id", metavar="RULE_ID")


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    return int(text)


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def check(args: argparse.Namespace, out: Console, err: Console) -> int:
    audited, input_errors = _audit_files(args, err)
    reports = [report for _, report in audited]
    if args.format == "json":
        print(json.dumps({"sessions": [r.to_json() for r in reports]}, indent=2))
    else:
        _report.print_check(out, reports, input_errors)
    if input_errors:
        return EXIT_USAGE
    failing = FAIL_LEVELS[args.fail_on]
    if any(f.action in failing for r in reports for f in r.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def score(args: argparse.Namespace, out: Console, err: Console) -> int:
    from safeagents._score import score as score_sessions

    audited, input_errors = _audit_files(args, err)
    result = score_sessions(audited)
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2))
    else:
        _report.print_score(out, result)
    if input_errors:
        return EXIT_USAGE
    if result.unlabelled:
        raise UsageError(
            f"{len(result.unlabelled)} session(s) without a label (hack, benign or contested), "
            f"first: {result.unlabelled[0]}"
        )
    below = args.min_recall is not None and (result.recall or 0.0) < args.min_recall
    above = args.max_fpr is not None and (result.fpr or 0.0) > args.max_fpr
    return EXIT_FINDINGS if below or above else EXIT_OK


def _audit_files(
    args: argparse.Namespace, err: Console
) -> tuple[list[tuple[Session, SessionReport]], list[InputError]]:
    from safeagents._audit import audit_session, load_sessions
    from safeagents._firewall import Firewall
    from safeagents._registry import UnknownHarnessError, default_registry

    registry = default_registry()
    firewall = Firewall(load_rules(args, err, detectors=registry.detectors))
    if args.harness:
        try:
            harness = firewall.registry.harness(args.harness).name
        except UnknownHarnessError as exc:
            raise UsageError(str(exc)) from None
    else:
        harness = None
    for file in args.files:
        if file != "-" and not Path(file).is_file():
            raise UsageError(f"input file not found: {file}")

    audited: list[tuple[Session, SessionReport]] = []
    input_errors: list[InputError] = []
    for file in args.files:
        sessions, problems = load_sessions(file)
        input_errors.extend(problems)
        for problem in problems:
            err.print(f"[yellow]skipped[/] {escape(str(problem))}", highlight=False)
        audited.extend(
            (s, audit_session(s, firewall, harness=harness, cwd=args.cwd)) for s in sessions
        )
    return audited, input_errors


def test(args: argparse.Namespace, out: Console, err: Console) -> int:
    from safeagents._firewall import Firewall
    from safeagents._registry import default_registry
    from safeagents.rules import RuleLoadError, run_fixtures

    try:
        results = run_fixtures(
            _paths(args),
            checker=Firewall,
            harness=default_registry().harness,
            min_cases=args.min_cases,
            exclude=tuple(args.exclude_rule),
        )
    except RuleLoadError as exc:
        raise UsageError(report_rule_errors(exc, err)) from None
    _report.print_fixtures(out, results)
    return EXIT_OK if all(r.passed for r in results) else EXIT_FINDINGS


def lint(args: argparse.Namespace, out: Console, err: Console) -> int:
    from safeagents._registry import default_registry
    from safeagents.rules import RuleLoadError, RuleSet, field_warnings

    try:
        rules = RuleSet.load(
            _paths(args),
            vars=parse_var_pairs(args.var),
            detectors=default_registry().detectors,
            exclude=tuple(args.exclude_rule),
        )
    except RuleLoadError as exc:
        summary = report_rule_errors(exc, err)
        if all(is_option_error(error) for error in exc.errors):
            raise UsageError(summary) from None
        err.print(f"[red]{escape(summary)}[/]")
        return EXIT_FINDINGS
    warnings = field_warnings(rules)
    for warning in warnings:
        err.print(str(warning), highlight=False, markup=False, soft_wrap=True)
    noted = f", {len(warnings)} warning(s)" if warnings else ""
    out.print(f"[green]ok[/] {len(rules.rules)} rules in {len(rules.packs)} pack(s){noted}")
    return EXIT_OK


def _paths(args: argparse.Namespace) -> list[str]:
    """``test`` and ``lint`` PATH… arguments: just those packs; else as ``--rules`` says."""
    if args.paths:
        return [*existing(args.paths), *existing(args.rules)]
    return rule_paths(args)


def explain(args: argparse.Namespace, out: Console, err: Console) -> int:
    rules = load_rules(args, err)
    try:
        rule = rules.get(args.rule_id)
    except KeyError as exc:
        raise UsageError(str(exc.args[0]) if exc.args else str(exc)) from None
    _report.print_rule(out, rule)
    return EXIT_OK
