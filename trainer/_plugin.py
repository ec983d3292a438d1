"""The trainer as a ``safeagents`` plugin (entry point ``trainer`` of the group ``safeagents``):
its reward hook, the ``safeagents train``, ``tasks``, ``rollouts`` and ``eval``
subcommands, and the web console's training section."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pluggy

from safeagents.plugins import ConsoleSection, hookimpl
from trainer._cli import add_train_arguments, run_train
from trainer._eval_cli import add_eval_arguments, run_eval
from trainer._rollout_cli import add_rollout_arguments, run_rollouts
from trainer.hookspecs import add_hookspecs
from trainer.sandbox import SANDBOXES
from trainer.tasks import TaskRunner, add_tasks_command

__all__ = ["safeagents_addhooks", "safeagents_cli_commands", "safeagents_console_sections"]


@hookimpl
def safeagents_addhooks(pluginmanager: pluggy.PluginManager) -> None:
    add_hookspecs(pluginmanager)


@hookimpl
def safeagents_cli_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    train = subparsers.add_parser(
        "train", help="GRPO on a per-harness LoRA adapter from scored transcripts (trainer)"
    )
    add_train_arguments(train)
    train.set_defaults(run=run_train)
    rollouts = subparsers.add_parser(
        "rollouts", help="N rollouts of every task through the proxy, as JSONL (trainer)"
    )
    add_rollout_arguments(rollouts)
    rollouts.set_defaults(run=run_rollouts)
    add_tasks_command(subparsers, sandboxes=SANDBOXES, sandbox_runner=_sandbox_runner)
    evaluate = subparsers.add_parser(
        "eval", help="checkpoints of a harness's adapter on held-out tasks, compared (trainer)"
    )
    add_eval_arguments(evaluate)
    evaluate.set_defaults(run=run_eval)


@hookimpl
def safeagents_console_sections(runs: Sequence[Path]) -> Sequence[ConsoleSection]:
    # Imported here: the command line never loads the console's templates.
    from trainer._console import training_app

    return [ConsoleSection("Training", "training", training_app(runs))]


def _sandbox_runner(name: str, harbor_environment: str | None) -> TaskRunner:
    """``tasks validate --sandbox NAME``'s runner, its sandbox checked once up front."""
    from trainer._sandbox_runner import SandboxRunner
    from trainer.sandbox import HarborBackend, LocalBackend, make_backend

    backend = make_backend(name, harbor_environment=harbor_environment)
    assert isinstance(backend, (LocalBackend, HarborBackend))  # made from a name
    backend.check()
    return SandboxRunner(backend)
