"""``safeagents rollouts CONFIG.yaml --out FILE``: ``N`` rollouts of every task of the
config's environment through the proxy, with a progress bar, one JSONL line per rollout;
run it again with the same ``--out`` to resume."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from pathlib import Path

import httpx
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from safeagents.store import open_store
from trainer._cli import read_config
from trainer._config import (
    TrainerConfig,
    add_sandbox_argument,
    choose_sandbox,
)
from trainer._driver import ResultsLog, RunSummary, drive, runner_from_config
from trainer._environment import Environment, EnvironmentSpecError, Task, load_environment
from trainer._runner import ProxyAdmin, ProxyAdminError
from trainer._scheduler import RolloutResult
from trainer.sandbox import SandboxError

__all__ = ["add_rollout_arguments", "run_rollouts"]


def add_rollout_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", metavar="CONFIG.yaml", help="the trainer config")
    parser.add_argument("--out", metavar="FILE", required=True, help="results JSONL (resumed)")
    parser.add_argument("--rollouts", type=int, metavar="N", help="per task (grpo.group_size)")
    parser.add_argument(
        "--concurrency", type=int, metavar="N", help="sessions live at once (environment's)"
    )
    parser.add_argument(
        "--model", metavar="NAME", help="what the proxy serves the harness (the base model)"
    )
    parser.add_argument("--proxy-url", metavar="URL", help="where agents reach the proxy")
    add_sandbox_argument(parser)


def run_rollouts(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Exit 0 when every rollout ran (failed ones included), 2 on bad input, 1 on a failure."""
    for name in ("rollouts", "concurrency"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            err.print(f"[red]error:[/] --{name} must be positive, got {value}")
            return 2
    config = read_config(args.config, err)
    if config is None:
        return 2
    if config.environment is None:
        err.print("[red]error:[/] the config has no environment section: nothing to roll out")
        return 2
    try:
        choose_sandbox(config, args.sandbox)
        environment = load_environment(config.environment.factory, config.environment.options)
    except (EnvironmentSpecError, ValueError, OSError, SandboxError) as problem:
        err.print(f"[red]error:[/] {escape(str(problem))}")
        return 2
    logging.getLogger("safeagents.trainer").setLevel(logging.ERROR)
    model = args.model or config.vllm.served_model or config.base_model
    try:
        ProxyAdmin(config.proxy.admin_url).set_alias(environment.harness, model)
    except (ProxyAdminError, httpx.HTTPError, OSError) as problem:
        err.print(
            f"[red]error:[/] the proxy at {escape(config.proxy.admin_url)}: {escape(str(problem))}"
        )
        return 1
    try:
        summary = asyncio.run(_run(config, environment, args, model, out))
    except (OSError, ProxyAdminError) as problem:
        err.print(f"[red]rollouts stopped:[/] {escape(repr(problem))}")
        return 1
    out.print(json.dumps(summary.as_dict()), markup=False, highlight=False, soft_wrap=True)
    return 0


async def _run(
    config: TrainerConfig,
    environment: Environment,
    args: argparse.Namespace,
    model: str,
    out: Console,
) -> RunSummary:
    store = open_store(config.proxy.store)
    try:
        runner = runner_from_config(
            config,
            environment,
            store=store,
            proxy_url=args.proxy_url,
            model=model,
            group_size=args.rollouts,
            concurrency=args.concurrency,
        )
        tasks = list(environment.tasks())
        with ResultsLog(Path(args.out)) as log:
            total = len(tasks) * runner.group_size
            done = sum(len(v & set(range(runner.group_size))) for v in log.done().values())
            columns = (
                TextColumn(f"{escape(environment.harness)} rollouts"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[live]} live, {task.fields[failed]} failed"),
                TimeElapsedColumn(),
            )
            with Progress(*columns, console=out) as progress:
                bar = progress.add_task("rollouts", total=total, completed=done, live=0, failed=0)
                counts = {"live": 0, "failed": 0}

                def started(task: Task, index: int) -> None:
                    counts["live"] += 1
                    progress.update(bar, live=counts["live"])

                def ended(result: RolloutResult) -> None:
                    counts["live"] -= 1
                    counts["failed"] += result.status not in ("scored", "unscored")
                    progress.update(bar, advance=1, live=counts["live"], failed=counts["failed"])

                return await drive(runner, tasks, log, on_start=started, on_result=ended)
    finally:
        await store.close()
