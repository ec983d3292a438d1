"""``safeagents eval CONFIG.yaml --tasks DIR --harness H --models base,H-v10,…``: the
held-out tasks run through the real harness in the local sandbox for every checkpoint, all
served as adapters by the config's vLLM server behind the proxy; a table, ``eval.json`` and
``eval.png`` comparing them. Re-running it starts no session for a rollout it has."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from rich.box import SIMPLE
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from safeagents.store import open_store
from trainer._cli import read_config
from trainer._config import TrainerConfig
from trainer._eval import (
    REPORT_JSON,
    Checkpoint,
    CheckpointError,
    CheckpointReport,
    check_results,
    evaluate_checkpoint,
    read_lines,
    resolve_checkpoints,
    serve_checkpoints,
    summarise,
)
from trainer._runner import ProxyAdmin, ProxyAdminError
from trainer._vllm import VLLMAdmin, VLLMError
from trainer.sandbox import SANDBOXES
from trainer.tasks import Task, TaskDirError, load_tasks

if TYPE_CHECKING:
    from trainer._sandbox_env import SandboxEnvironment

__all__ = ["add_eval_arguments", "run_eval"]

REPORT_PNG = "eval.png"
_SHARED_OPTIONS = ("limits", "verify_limits", "workdir", "backend")


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", metavar="CONFIG.yaml", help="the trainer config")
    parser.add_argument("--tasks", metavar="DIR", required=True, help="Harbor tasks")
    parser.add_argument("--harness", metavar="NAME", required=True, help="the harness to run")
    parser.add_argument(
        "--models",
        metavar="LIST",
        required=True,
        help="checkpoints, comma-separated: base and kept adapter versions (pi-v10, …)",
    )
    parser.add_argument("--rollouts", type=int, default=1, metavar="K", help="per task")
    parser.add_argument("--concurrency", type=int, metavar="N", help="sessions live at once")
    parser.add_argument(
        "--out", metavar="DIR", help="results, kept between runs (output_dir/eval-HARNESS)"
    )
    parser.add_argument("--proxy-url", metavar="URL", help="where agents reach the proxy")
    parser.add_argument(
        "--all-tasks",
        action="store_true",
        help="evaluate tasks that are not held out too (their figures are not held-out ones)",
    )
    parser.add_argument(
        "--sandbox",
        choices=SANDBOXES,
        help="the sandbox backend (default: the config environment's, else local)",
    )


def run_eval(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Exit 0 when every checkpoint was evaluated, 2 on bad input, 1 on a failure."""
    for name in ("rollouts", "concurrency"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            err.print(f"[red]error:[/] --{name} must be positive, got {value}")
            return 2
    config = read_config(args.config, err)
    tasks = _tasks(args.tasks, args.all_tasks, err)
    if config is None or tasks is None:
        return 2
    # The sandbox is imported when a command needs it: listing commands never loads it.
    from trainer._sandbox_env import SandboxEnvironment
    from trainer.sandbox import SandboxError

    names = [name.strip() for name in args.models.split(",") if name.strip()]
    base = config.vllm.served_model or config.base_model
    try:
        checkpoints = resolve_checkpoints(
            names, harness=args.harness, base_served=base, output_dir=Path(config.output_dir)
        )
        settings = _limits(config)
        if args.sandbox is not None:
            settings["backend"] = args.sandbox
        environment = SandboxEnvironment(harness=args.harness, tasks=tasks, **settings)
    except CheckpointError as problem:
        for line in problem.problems:
            err.print(f"[red]error:[/] {escape(line)}")
        return 2
    except (SandboxError, ValueError, OSError) as problem:
        err.print(f"[red]error:[/] {escape(str(problem))}")
        return 2
    except TypeError as problem:  # a limit the sandbox does not know
        err.print(f"[red]error:[/] environment options: {escape(str(problem))}")
        return 2
    results = Path(args.out or Path(config.output_dir) / f"eval-{args.harness}")
    ids = [task.id for task in tasks]
    try:
        for checkpoint in checkpoints:
            check_results(checkpoint, results / f"{checkpoint.name}.jsonl")
    except CheckpointError as problem:
        err.print(f"[red]error:[/] {escape(str(problem))}")
        return 2
    pending = [c for c in checkpoints if _missing(results / f"{c.name}.jsonl", ids, args.rollouts)]
    logging.getLogger("safeagents.trainer").setLevel(logging.ERROR)
    if pending:
        try:
            with VLLMAdmin(config.vllm.base_url) as server:
                loaded = serve_checkpoints(server, checkpoints)
        except (VLLMError, CheckpointError) as problem:
            err.print(
                f"[red]error:[/] vLLM at {escape(config.vllm.base_url)}: {escape(str(problem))}"
            )
            return 1
        if loaded:
            out.print(f"loaded into vLLM: {', '.join(loaded)}", highlight=False)
    admin = ProxyAdmin(config.proxy.admin_url, token=os.environ.get(config.proxy.admin_token_env))
    ran: dict[str, int] = {}
    for checkpoint in pending:
        try:
            admin.set_alias(args.harness, checkpoint.served)
            summary = asyncio.run(_run(config, environment, checkpoint, results, args, out))
        except (ProxyAdminError, httpx.HTTPError, OSError) as problem:
            err.print(f"[red]error:[/] evaluating {checkpoint.name}: {escape(str(problem))}")
            return 1
        ran[checkpoint.name] = summary.ran
    reports = [
        summarise(c, read_lines(results / f"{c.name}.jsonl"), ids, args.rollouts)
        for c in checkpoints
    ]
    _write(reports, results, args, ids, ran)
    out.print(_table(reports, args.harness, args.rollouts))
    out.print(f"report: {results / REPORT_JSON}\nplot:   {results / REPORT_PNG}", highlight=False)
    return 0


def _limits(config: TrainerConfig) -> dict[str, Any]:
    """The training environment's sandbox settings (limits, workdir, backend), where it names
    them: evaluation runs the harness under the same ones."""
    options = config.environment.options if config.environment is not None else {}
    return {key: options[key] for key in _SHARED_OPTIONS if key in options}


def _tasks(path: str, all_tasks: bool, err: Console) -> list[Task] | None:
    """The held-out tasks under ``path`` (all of them with ``all_tasks``); the others are
    left out with a warning."""
    try:
        loaded = load_tasks(path)
    except TaskDirError as problem:
        for line in problem.problems:
            err.print(f"[red]error:[/] {escape(line)}")
        return None
    held = [task for task in loaded if task.held_out]
    trained = len(loaded) - len(held)
    if all_tasks:
        if trained:
            err.print(
                f"[yellow]warning:[/] {trained} of {len(loaded)} task(s) are not held out: "
                "training may have seen them"
            )
        return loaded
    if not held:
        err.print(
            f"[red]error:[/] {escape(path)}: none of its {len(loaded)} task(s) is held out "
            "(--all-tasks evaluates them anyway)"
        )
        return None
    if trained:
        err.print(
            f"[yellow]warning:[/] {trained} task(s) in {escape(path)} are not held out and are "
            "left out (--all-tasks includes them)"
        )
    return held


def _missing(results: Path, task_ids: Sequence[str], k: int) -> bool:
    done = {(line["task_id"], int(line["index"])) for line in read_lines(results)}
    return any((task, index) not in done for task in task_ids for index in range(k))


async def _run(
    config: TrainerConfig,
    environment: SandboxEnvironment,
    checkpoint: Checkpoint,
    results: Path,
    args: argparse.Namespace,
    out: Console,
) -> Any:
    store = open_store(config.proxy.store)
    total = len(environment.tasks()) * args.rollouts
    columns = (
        TextColumn(f"{escape(checkpoint.name)}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    try:
        with Progress(*columns, console=out, transient=True) as progress:
            bar = progress.add_task("rollouts", total=total)
            return await evaluate_checkpoint(
                config,
                environment,
                checkpoint,
                store=store,
                results=results / f"{checkpoint.name}.jsonl",
                rollouts=args.rollouts,
                concurrency=args.concurrency,
                proxy_url=args.proxy_url,
                on_result=lambda result: progress.update(bar, advance=1),
            )
    finally:
        await store.close()


def _write(
    reports: Sequence[CheckpointReport],
    results: Path,
    args: argparse.Namespace,
    task_ids: Sequence[str],
    ran: dict[str, int],
) -> None:
    from trainer._eval_plot import plot_eval

    results.mkdir(parents=True, exist_ok=True)
    report = {
        "harness": args.harness,
        "tasks_dir": str(args.tasks),
        "rollouts": args.rollouts,
        "tasks": list(task_ids),
        "ran_now": ran,
        "checkpoints": [r.to_json() for r in reports],
    }
    (results / REPORT_JSON).write_text(json.dumps(report, indent=1) + "\n")
    title = f"safeagents eval: {args.harness}, {len(task_ids)} task(s) × {args.rollouts}"
    plot_eval(reports, results / REPORT_PNG, title=title)


def _cell(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _table(reports: Sequence[CheckpointReport], harness: str, k: int) -> Table:
    table = Table(title=f"{harness}: held-out evaluation, {k} rollout(s) per task", box=SIMPLE)
    table.add_column("checkpoint", no_wrap=True)
    for column in ("step", "scored", "pass@1", f"mean@{k}", "calls", "hacks", "tokens", "s/run"):
        table.add_column(column, justify="right", no_wrap=True)
    for r in reports:
        table.add_row(
            r.checkpoint,
            "—" if r.step is None else str(r.step),
            f"{r.scored}/{r.rollouts}",
            _cell(r.pass_at_1),
            _cell(r.mean_success),
            _cell(r.tool_calls_mean, 1),
            _cell(r.hack_rate),
            _cell(r.tokens_mean, 0),
            _cell(r.session_seconds_mean, 1),
        )
    table.caption = "calls: tool calls per session; hacks: share of sessions with a hack finding"
    return table
