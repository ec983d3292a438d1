"""What every subcommand shares: the parser class, usage errors and exit codes, rule loading."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from safeagents.rules import RuleError, RuleLoadError, RuleSet

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_FINDINGS",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "DefaultsFormatter",
    "Parser",
    "UsageError",
    "add_enforcement_options",
    "add_rule_options",
    "add_runs_option",
    "add_store_option",
    "existing",
    "existing_runs",
    "is_option_error",
    "load_rules",
    "parse_aliases",
    "parse_var_pairs",
    "report_rule_errors",
    "rule_paths",
]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141  # 128 + SIGINT, 128 + SIGPIPE, as shells report
VAR_SOURCE = "--var"


class DefaultsFormatter(argparse.HelpFormatter):
    """Help that shows each option's default, when it has one worth showing."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        default = action.default
        if (
            text is None
            or text == argparse.SUPPRESS
            or "default" in text
            or default in (None, False, [], argparse.SUPPRESS)
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        Console(stderr=True, soft_wrap=True).print(
            f"[red]error:[/] {escape(message)}", highlight=False
        )
        raise SystemExit(EXIT_USAGE)


class UsageError(Exception):
    pass


def parse_var_pairs(pairs: Sequence[str]) -> dict[str, str]:
    from safeagents.rules import parse_vars

    try:
        return parse_vars(pairs)
    except ValueError as problem:
        raise UsageError(f"--var {problem}") from None


def parse_aliases(pairs: Sequence[str]) -> dict[str, str]:
    from safeagents._registry import default_registry
    from safeagents.exchange import canonical_aliases

    parsed: dict[str, str] = {}
    for pair in pairs:
        harness, sep, model = pair.partition("=")
        if not sep or not harness.strip() or not model.strip():
            raise UsageError(f"--model-alias expects HARNESS=MODEL, got {pair!r}")
        parsed[harness] = model.strip()
    try:
        return canonical_aliases(default_registry(), parsed)
    except ValueError as exc:
        raise UsageError(f"--model-alias: {exc}") from None


def existing(paths: Sequence[str]) -> list[str]:
    """``paths``, each checked to exist: a missing one is a usage error, not a rule error."""
    for path in paths:
        if not Path(path).exists():
            raise UsageError(f"rule path not found: {path}")
    return list(paths)


def rule_paths(args: argparse.Namespace) -> list[str]:
    """The rule paths ``--rules`` and ``--no-default-rules`` select: the bundled packs, then
    each ``--rules`` path (``[]`` never: without any, the bundled packs alone)."""
    from safeagents.rules import bundled_rules_path

    extra = existing(args.rules)
    if args.no_default_rules:
        if not extra:
            raise UsageError("--no-default-rules needs --rules PATH (there would be no rules)")
        return extra
    return [str(bundled_rules_path()), *extra]


def load_rules(
    args: argparse.Namespace, err: Console, *, detectors: Collection[str] | None = None
) -> RuleSet:
    """The rules ``args`` select (:func:`rule_paths`, ``--exclude-rule``, ``--var``)."""
    from safeagents.rules import RuleLoadError, RuleSet

    paths = rule_paths(args)
    try:
        return RuleSet.load(
            paths,
            vars=parse_var_pairs(args.var),
            detectors=detectors,
            exclude=tuple(args.exclude_rule),
        )
    except RuleLoadError as exc:
        raise UsageError(report_rule_errors(exc, err)) from None


def report_rule_errors(exc: RuleLoadError, err: Console) -> str:
    """Print each error of ``exc``; return the one-line summary (the error itself when only
    a ``--var`` was wrong, since no rule file is)."""
    in_files = [error for error in exc.errors if not is_option_error(error)]
    if not in_files and len(exc.errors) == 1:
        return str(exc.errors[0])
    for error in exc.errors:
        err.print(str(error), highlight=False, markup=False)
    in_options = len(exc.errors) - len(in_files)
    parts = [f"{len(in_files)} error(s) in rule files"] if in_files else []
    parts += [f"{in_options} in options"] if in_options else []
    return ", ".join(parts)


def is_option_error(error: RuleError) -> bool:
    """An error of ``--var`` or ``--exclude-rule``, not of a rule file."""
    from safeagents.rules import EXCLUDE_SOURCE, VAR_SOURCE

    return error.file in (VAR_SOURCE, EXCLUDE_SOURCE)


def add_store_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--store``: a SQLite file or a ``postgresql://`` URL (default ``$SAFEAGENTS_STORE``)."""
    from safeagents.store import default_store, redacted

    shown = redacted(default_store()).replace("%", "%%")  # help never shows a password
    parser.add_argument(
        "--store",
        default=default_store(),
        metavar="PATH.db|URL",
        help=f"{what}: a SQLite file or postgresql://user@host/db, taken from "
        f"$SAFEAGENTS_STORE when that is set (default: {shown})",
    )


def add_enforcement_options(parser: argparse.ArgumentParser) -> None:
    """What ``serve`` and ``intercept`` share: where transcripts go and how blocks are handled."""
    add_store_option(parser, "where transcripts go")
    parser.add_argument(
        "--mode",
        choices=("enforce", "monitor"),
        default="enforce",
        help="enforce: withhold blocked calls; monitor: change nothing, record findings",
    )
    parser.add_argument(
        "--strategy",
        choices=("reask", "rewrite", "stop"),
        default="reask",
        help="what a blocked call leads to: ask the model again with the rule's message, "
        "replace it with a shell call printing the rejection, or end the run",
    )
    parser.add_argument(
        "--max-reasks", type=int, default=3, metavar="N", help="re-asks before stopping"
    )


def add_rule_options(parser: argparse.ArgumentParser, *, var: bool = True) -> None:
    """``--rules``, ``--no-default-rules``, ``--exclude-rule``, ``--var``: the same for every
    command that loads rules."""
    parser.add_argument(
        "--rules",
        action="append",
        default=[],
        metavar="PATH",
        help="a rule pack, directory of packs or rule file, loaded with the bundled packs "
        "(repeatable)",
    )
    parser.add_argument(
        "--no-default-rules",
        action="store_true",
        help="load only the --rules packs, not the bundled ones",
    )
    parser.add_argument(
        "--exclude-rule",
        action="append",
        default=[],
        metavar="ID",
        help="leave out the rule ID, bundled or not (repeatable)",
    )
    if var:
        parser.add_argument(
            "--var",
            action="append",
            default=[],
            metavar="K=V",
            help="override a pack var; V splits on commas (repeatable)",
        )


def add_runs_option(parser: argparse.ArgumentParser) -> None:
    """``--runs DIR`` (repeatable): run directories for the web console's add-on sections."""
    parser.add_argument(
        "--runs",
        action="append",
        default=[],
        metavar="DIR",
        help="a training run or evaluation directory for the web console's add-on sections "
        "(repeatable)",
    )


def existing_runs(args: argparse.Namespace) -> tuple[str, ...]:
    """The ``--runs`` directories; :class:`UsageError` names those that are not there."""
    missing = [run for run in args.runs if not Path(run).is_dir()]
    if missing:
        raise UsageError(f"--runs: no directory {', '.join(missing)}")
    return tuple(args.runs)
