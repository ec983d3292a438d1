"""The ``safeagents`` command line: check, test, lint, explain, serve, sessions, store, demo,
intercept, ui, and the subcommands plugins add (``safeagents_cli_commands``: the trainer's
``train``)."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from safeagents.cli._common import (
    EXIT_BROKEN_PIPE,
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    Parser,
    UsageError,
)
from safeagents.cli._console import add_ui, ui
from safeagents.cli._proxy import (
    add_intercept,
    add_serve,
    add_sessions,
    intercept,
    serve,
    sessions,
)
from safeagents.cli._rules import add_rule_commands, check, explain, lint, score, test
from safeagents.cli._store import add_store, store

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="safeagents", description="A tool-call firewall for coding agents.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    add_rule_commands(sub)
    add_serve(sub)
    add_sessions(sub)
    add_store(sub)
    _add_demo(sub)
    add_intercept(sub)
    add_ui(sub)
    _add_plugin_commands(sub)
    return parser


def _add_plugin_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    from safeagents._registry import default_registry

    default_registry().plugin_manager.hook.safeagents_cli_commands(subparsers=sub)


def _add_demo(sub: argparse._SubParsersAction[Parser]) -> None:
    demo = sub.add_parser(
        "demo", help="run a scripted agent that tries to hack its tests, through the proxy"
    )
    demo.add_argument(
        "--store",
        default="safeagents-demo.db",
        metavar="PATH.db",
        help="where the transcript goes (default: ./safeagents-demo.db)",
    )
    demo.add_argument(
        "--harness",
        default="auto",
        metavar="NAME",
        help="auto (pi or opencode from .harnesses/ if installed, else the built-in agent "
        "loop), builtin, opencode, pi, hermes, codex or claude",
    )
    demo.add_argument(
        "--keep-workspace", action="store_true", help="keep the temporary project afterwards"
    )
    demo.add_argument("--timeout", type=float, default=240.0, metavar="SECONDS")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    for stream in (sys.stdout, sys.stderr):  # a lone surrogate in a session prints as \ud800
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    out, err = _Console(), _Console(stderr=True, soft_wrap=True)
    try:
        handler = {
            "check": check,
            "score": score,
            "test": test,
            "lint": lint,
            "explain": explain,
            "serve": serve,
            "sessions": sessions,
            "store": store,
            "demo": _demo,
            "intercept": intercept,
            "ui": ui,
        }
        run: Callable[[argparse.Namespace, Console, Console], int] = (
            handler.get(args.command) or args.run  # a plugin's subcommand
        )
        return run(args, out, err)
    except UsageError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (`safeagents check … | head`)
        _silence_stdout()
        return EXIT_BROKEN_PIPE


class _Console(Console):
    def on_broken_pipe(self) -> None:
        raise BrokenPipeError  # to main, which exits 141 (rich would exit 1: "findings")


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _demo(args: argparse.Namespace, out: Console, err: Console) -> int:
    from safeagents.demo import DemoError, DemoOptions, run_demo

    options = DemoOptions(
        store=Path(args.store),
        harness=args.harness,
        keep_workspace=args.keep_workspace,
        timeout=args.timeout,
    )
    try:
        result = run_demo(options, out)
    except DemoError as exc:
        raise UsageError(str(exc)) from None
    return EXIT_OK if result.ok else EXIT_FINDINGS
