"""``safeagents train CONFIG.yaml``: one adapter's GRPO run with a live view, JSONL metrics
and a PNG of the curves at the end."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from trainer._config import (
    ConfigError,
    TrainerConfig,
    add_sandbox_argument,
    choose_sandbox,
    load_config,
)
from trainer._environment import EnvironmentSpecError
from trainer._metrics import MetricsLog, StepMetrics, read_metrics
from trainer.sandbox import SandboxError

__all__ = ["add_train_arguments", "run_train"]

_MISSING = "the trainer needs the train extra: pip install 'safeagents[train]' ({name} missing)"


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", metavar="CONFIG.yaml", help="the trainer config")
    parser.add_argument(
        "--harness",
        metavar="NAME",
        help="the adapter to train (default: the environment's harness)",
    )
    parser.add_argument(
        "--proxy-url",
        metavar="URL",
        help="where agents reach the proxy (default: proxy.admin_url without /safeagents/v1)",
    )
    add_sandbox_argument(parser)


def read_config(path: str, err: Console) -> TrainerConfig | None:
    """The config at ``path``, or None once what is wrong with it is printed to ``err``."""
    try:
        return load_config(Path(path))
    except ConfigError as problem:
        for issue in problem.issues:
            err.print(str(issue), markup=False, highlight=False)
    except OSError as problem:
        err.print(f"[red]error:[/] cannot read {escape(path)}: {escape(str(problem))}")
    return None


def run_train(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Exit 0 when every step ran, 2 on a bad config or missing extra, 1 on a failed run."""
    config = read_config(args.config, err)
    if config is None:
        return 2
    try:
        import torch  # noqa: F401
        import trl  # noqa: F401
    except ImportError as problem:
        err.print(f"[red]error:[/] {escape(_MISSING.format(name=problem.name))}")
        return 2
    from trainer._live import LiveView
    from trainer._plot import plot_curves
    from trainer._train import Training

    logging.getLogger("safeagents.trainer").setLevel(logging.WARNING)
    try:
        choose_sandbox(config, args.sandbox)
        training = Training(config, harness=args.harness, proxy_url=args.proxy_url)
    except (EnvironmentSpecError, ValueError, SandboxError) as problem:
        err.print(f"[red]error:[/] {escape(str(problem))}")
        return 2
    output = Path(config.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    metrics_path = output / f"metrics-{training.harness}.jsonl"
    title = f"safeagents train: {training.harness} on {config.base_model}"
    with (
        MetricsLog(metrics_path) as log,
        LiveView(title=title, total_steps=config.grpo.max_steps, console=out) as view,
    ):

        def record(metrics: StepMetrics) -> None:
            log.append(metrics)
            view.update(metrics)

        try:
            result = training.run(on_metrics=record, on_note=view.note)
        except Exception as problem:  # the run failed: keep what was measured
            err.print(f"[red]training stopped:[/] {escape(repr(problem))}")
            result = None
    measured = read_metrics(metrics_path)
    if measured:
        png = plot_curves(measured, output / f"curves-{training.harness}.png")
        out.print(f"metrics: {metrics_path}\ncurves:  {png}", highlight=False)
    if result is None:
        return 1
    published = ", ".join(result.published) or "none"
    out.print(f"published: {published}", highlight=False)
    return 0
