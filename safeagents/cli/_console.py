"""``safeagents ui``: the web console for a store, without a proxy in front of a model."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rich.console import Console

from safeagents.cli._common import (
    EXIT_OK,
    Parser,
    UsageError,
    add_rule_options,
    add_runs_option,
    add_store_option,
    existing_runs,
    load_rules,
)

__all__ = ["add_ui", "ui"]


def add_ui(sub: argparse._SubParsersAction[Parser]) -> None:
    ui = sub.add_parser("ui", help="serve the web console for a transcript store")
    add_store_option(ui, "the store to show")
    add_runs_option(ui)
    add_rule_options(ui)
    ui.add_argument("--host", default="127.0.0.1", help="address to listen on")
    ui.add_argument("--port", type=int, default=8788, help="port to listen on")
    ui.add_argument(
        "--admin-token",
        metavar="T",
        help="token the console asks for (required beyond loopback; "
        "default: $SAFEAGENTS_ADMIN_TOKEN)",
    )
    ui.add_argument(
        "--log-level",
        choices=("critical", "error", "warning", "info", "debug"),
        default="warning",
        help="uvicorn's log level",
    )


def ui(args: argparse.Namespace, out: Console, err: Console) -> int:
    import asyncio

    import uvicorn

    from safeagents._firewall import Firewall
    from safeagents._registry import PluginError, default_registry
    from safeagents.console import CONSOLE_PREFIX, plugin_sections, standalone_app
    from safeagents.exchange import Credentials, ProxyConfig
    from safeagents.store import StoreError, check_store, is_postgres, open_store, redacted
    from safeagents.store import sqlite_path as path_of

    token = args.admin_token or os.environ.get("SAFEAGENTS_ADMIN_TOKEN") or None
    config = ProxyConfig(upstream="http://127.0.0.1/", host=args.host, admin_token=token)
    if config.needs_admin_token and not token:
        raise UsageError(
            f"refusing to listen on {args.host} (beyond loopback) without --admin-token"
        )
    if not is_postgres(args.store) and not Path(path_of(args.store)).is_file():
        raise UsageError(f"no store at {args.store} (give --store PATH.db or a URL)")
    try:
        asyncio.run(check_store(args.store))
    except StoreError as error:
        raise UsageError(str(error)) from None
    runs = [Path(run) for run in existing_runs(args)]
    registry = default_registry()
    rules = load_rules(args, err, detectors=registry.detectors)
    try:
        sections = plugin_sections(registry, runs)
    except PluginError as exc:
        raise UsageError(str(exc)) from None
    app = standalone_app(
        open_store(args.store), Firewall(rules, registry), Credentials(config), sections=sections
    )
    err.print(
        f"safeagents ui: http://{args.host}:{args.port}{CONSOLE_PREFIX}/  "
        f"(store {redacted(args.store)}, {len(rules.rules)} rules"
        f"{', token needed' if token else ''})",
        highlight=False,
    )
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        timeout_graceful_shutdown=5,
    )
    return EXIT_OK
