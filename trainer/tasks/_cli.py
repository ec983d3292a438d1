"""``safeagents tasks validate DIR...``, ``safeagents tasks generate --repo PATH --out DIR``,
``tasks bundled`` and ``tasks pack`` (added to the ``safeagents`` command line by the
trainer plugin)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from trainer.tasks._bundle_cli import add_bundle_commands
from trainer.tasks._config import TASK_CLASSES
from trainer.tasks._generate import GenerateOptions, RepositoryError, generate_tasks
from trainer.tasks._load import TaskDirError, find_task_dirs
from trainer.tasks._run import TaskRunner
from trainer.tasks._validate import TaskReport, validate_tasks

__all__ = ["SandboxRunnerFactory", "add_tasks_command", "progress_bar"]

SandboxRunnerFactory = Callable[[str, str | None], TaskRunner]
"""Makes the runner of ``validate --sandbox NAME [--harbor-env ENV]`` (ready to run, or a
``RuntimeError``, ``ValueError`` or ``OSError`` saying why not)."""

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def progress_bar(console: Console) -> Progress:
    """The progress bar of long task work, on ``console`` (stderr), gone when done."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def add_tasks_command(
    subparsers: argparse._SubParsersAction[Any],
    *,
    sandboxes: tuple[str, ...] = (),
    sandbox_runner: SandboxRunnerFactory | None = None,
) -> None:
    """``tasks`` and its subcommands, on ``safeagents``' subparsers; with ``sandbox_runner``,
    ``validate --sandbox NAME`` (one of ``sandboxes``) runs the checks in that sandbox."""
    tasks = subparsers.add_parser("tasks", help="check and generate tasks in Harbor's format")
    sub = tasks.add_subparsers(
        dest="tasks_command", metavar="COMMAND", required=True, parser_class=type(tasks)
    )
    validate = sub.add_parser(
        "validate",
        help="each task loads, its oracle passes and its untouched workspace fails",
    )
    validate.add_argument(
        "paths", nargs="+", metavar="DIR", help="a task directory, or a directory of them"
    )
    validate.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        metavar="N",
        help="tasks checked at once (default: 2, or 1 on one core)",
    )
    validate.add_argument("--json", metavar="PATH", help="also write the reports as JSON")
    if sandbox_runner is not None and sandboxes:
        validate.add_argument(
            "--sandbox",
            nargs="?",
            const=sandboxes[0],
            choices=sandboxes,
            help=f"run the oracle and the verifier in a sandbox (default: {sandboxes[0]}); "
            "without it they run as plain subprocesses",
        )
        validate.add_argument(
            "--harbor-env",
            metavar="ENV",
            help="with --sandbox harbor: Harbor's environment, a type (docker, modal, daytona) "
            "or module:Class (default: the local sandbox, driven by Harbor)",
        )
    validate.set_defaults(run=run_validate, sandbox_runner=sandbox_runner)
    generate = sub.add_parser(
        "generate", help="tasks (repair, qa, build, extend) from a repository with a test suite"
    )
    generate.add_argument("--repo", required=True, metavar="PATH", help="the repository")
    generate.add_argument("--out", required=True, metavar="DIR", help="where tasks are written")
    generate.add_argument(
        "--classes",
        default=",".join(TASK_CLASSES),
        metavar="LIST",
        help=f"comma-separated task classes (default: {','.join(TASK_CLASSES)})",
    )
    generate.add_argument("--limit", type=int, default=20, metavar="N", help="tasks at most")
    generate.add_argument(
        "--seed", type=int, default=0, metavar="S", help="the order functions are tried in"
    )
    generate.add_argument(
        "--held-out",
        action="store_true",
        help="mark every task of this repository held out (evaluation only)",
    )
    generate.add_argument(
        "--name", metavar="NAME", help="the repository's name in tasks (default: its directory)"
    )
    generate.set_defaults(run=run_generate)
    add_bundle_commands(sub)


def _show(report: TaskReport, out: Console) -> None:
    name = report.task.id if report.task else str(report.path)
    if report.valid and report.untouched and report.oracle:
        out.print(
            f"[green]valid[/]   {escape(name)}  untouched {report.untouched.reward:g}, "
            f"oracle {report.oracle.reward:g}  ({report.seconds:.1f}s)",
            highlight=False,
        )
        return
    out.print(f"[red]INVALID[/] {escape(name)}", highlight=False, soft_wrap=True)
    for problem in report.problems:
        out.print(f"  {problem}", markup=False, highlight=False, soft_wrap=True)


def run_validate(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Exit 0 when every task is valid, 1 when one is not (or a path holds none), 2 on usage."""
    if args.jobs < 1:
        err.print("[red]error:[/] --jobs must be at least 1")
        return EXIT_USAGE
    runner = None
    sandbox = getattr(args, "sandbox", None)
    harbor_env = getattr(args, "harbor_env", None)
    if harbor_env is not None and sandbox != "harbor":
        err.print("[red]error:[/] --harbor-env needs --sandbox harbor")
        return EXIT_USAGE
    if sandbox is not None:
        try:
            runner = args.sandbox_runner(sandbox, harbor_env)
        except (RuntimeError, ValueError, OSError) as problem:
            err.print(f"[red]error:[/] the {sandbox} sandbox: {escape(str(problem))}")
            return EXIT_USAGE
    total = 0
    for path in args.paths:
        try:
            total += len(find_task_dirs(path))
        except TaskDirError:
            total += 1  # reported as one invalid entry by validate_tasks
    with progress_bar(err) as progress:
        bar = progress.add_task("validating", total=total)
        reports = validate_tasks(
            args.paths, runner, jobs=args.jobs, on_report=lambda _: progress.advance(bar)
        )
    for report in reports:
        _show(report, out)
    invalid = sum(not report.valid for report in reports)
    colour = "red" if invalid else "green"
    out.print(
        f"[{colour}]{len(reports) - invalid} valid, {invalid} invalid[/] of {len(reports)}",
        highlight=False,
    )
    if args.json:
        try:
            Path(args.json).write_text(
                json.dumps([report.as_dict() for report in reports], indent=2) + "\n",
                encoding="utf-8",
            )
        except OSError as problem:
            err.print(f"[red]error:[/] cannot write {escape(args.json)}: {escape(str(problem))}")
            return EXIT_USAGE
    return EXIT_INVALID if invalid else EXIT_OK


def _classes(text: str) -> list[Any]:
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = sorted(set(chosen) - set(TASK_CLASSES))
    if unknown or not chosen:
        raise ValueError(
            f"--classes: unknown {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(TASK_CLASSES)}"
        )
    return list(dict.fromkeys(chosen))


def run_generate(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Exit 0 when a task was written, 1 when none could be, 2 on usage or a bad repository."""
    try:
        classes = _classes(args.classes)
        if args.limit < 1:
            raise ValueError("--limit must be at least 1")
    except ValueError as problem:
        err.print(f"[red]error:[/] {escape(str(problem))}")
        return EXIT_USAGE
    options = GenerateOptions(
        repo=Path(args.repo),
        out=Path(args.out),
        classes=classes,
        limit=args.limit,
        seed=args.seed,
        held_out=args.held_out,
        name=args.name,
    )
    with progress_bar(err) as progress:
        bar = progress.add_task("generating", total=args.limit)
        try:
            result = generate_tasks(
                options,
                on_note=lambda text: progress.update(bar, description=escape(text[:60])),
                on_task=lambda _: progress.advance(bar),
            )
        except RepositoryError as problem:
            err.print(f"[red]error:[/] {escape(str(problem))}", soft_wrap=True)
            return EXIT_USAGE
        except OSError as problem:
            err.print(f"[red]error:[/] {escape(str(problem))}", soft_wrap=True)
            return EXIT_USAGE
    counts = ", ".join(f"{result.by_class[name]} {name}" for name in classes)
    out.print(f"{len(result.written)} tasks in {escape(args.out)} ({counts})", highlight=False)
    for reason, count in result.rejected.most_common():
        out.print(f"  skipped {count}: {reason}", markup=False, highlight=False)
    return EXIT_OK if result.written else EXIT_INVALID
