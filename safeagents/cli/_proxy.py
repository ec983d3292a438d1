"""Running the firewall and reading what it recorded: serve, intercept, sessions."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from safeagents.cli._common import (
    EXIT_OK,
    Parser,
    UsageError,
    add_enforcement_options,
    add_rule_options,
    add_runs_option,
    add_store_option,
    existing_runs,
    load_rules,
    parse_aliases,
    parse_var_pairs,
    rule_paths,
)

if TYPE_CHECKING:
    from safeagents.store import SessionRecord, Store

__all__ = ["add_intercept", "add_serve", "add_sessions", "intercept", "serve", "sessions"]


def add_serve(sub: argparse._SubParsersAction[Parser]) -> None:
    serve = sub.add_parser("serve", help="run the intercepting proxy in front of a model server")
    serve.add_argument("--upstream", required=True, metavar="URL", help="model server base URL")
    add_rule_options(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8787, help="port to listen on")
    add_enforcement_options(serve)
    serve.add_argument(
        "--capture-tokens",
        action="store_true",
        help="record token ids and logprobs per turn (Responses and Messages requests then "
        "reach the upstream as Chat Completions)",
    )
    serve.add_argument(
        "--chat-upstream",
        action="store_true",
        help="send Responses and Messages requests upstream as Chat Completions",
    )
    serve.add_argument(
        "--admin-token",
        metavar="T",
        help="bearer token for the admin API (required beyond loopback; "
        "default: $SAFEAGENTS_ADMIN_TOKEN, which keeps it out of `ps`)",
    )
    serve.add_argument(
        "--client-token",
        metavar="T",
        help="API key harnesses present on model endpoints (default: $SAFEAGENTS_CLIENT_TOKEN); "
        "with it or --admin-token, model endpoints need a key (docs/security.md)",
    )
    serve.add_argument(
        "--session-secret",
        metavar="S",
        help="signs the session keys the proxy issues (default: $SAFEAGENTS_SESSION_SECRET, "
        "else derived from the admin or client token)",
    )
    serve.add_argument(
        "--upstream-api-key",
        metavar="K",
        help="the upstream's own API key, sent instead of the harness's "
        "(default: $SAFEAGENTS_UPSTREAM_API_KEY)",
    )
    serve.add_argument(
        "--workers", type=int, default=1, metavar="N", help="worker processes sharing the port"
    )
    serve.add_argument("--cwd", default="/workspace", help="agent working directory")
    serve.add_argument(
        "--body-limit", type=int, default=32, metavar="MIB", help="largest request body read"
    )
    serve.add_argument(
        "--response-limit",
        type=int,
        default=32,
        metavar="MIB",
        help="largest upstream answer read (decoded); beyond it the harness gets a 502",
    )
    serve.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="longest wait on the upstream (a 504 past it)",
    )
    serve.add_argument(
        "--model-alias",
        action="append",
        default=[],
        metavar="HARNESS=MODEL",
        help="ask the upstream for MODEL on HARNESS's requests (repeatable; "
        "changed at run time under /safeagents/v1/aliases)",
    )
    add_runs_option(serve)
    serve.add_argument(
        "--log-level",
        choices=("critical", "error", "warning", "info", "debug"),
        default="info",
        help="uvicorn's log level",
    )


def serve(args: argparse.Namespace, out: Console, err: Console) -> int:
    import os

    from safeagents._firewall import Firewall
    from safeagents._registry import default_registry
    from safeagents.exchange import redact_url
    from safeagents.proxy import ProxyConfig, serve

    def secret(flag: str | None, name: str) -> str | None:
        return flag or os.environ.get(f"SAFEAGENTS_{name}") or None

    token = secret(args.admin_token, "ADMIN_TOKEN")
    try:
        config = ProxyConfig(
            upstream=args.upstream,
            rules=tuple(rule_paths(args)),
            exclude_rules=tuple(args.exclude_rule),
            vars=parse_var_pairs(args.var),
            host=args.host,
            port=args.port,
            store=args.store,
            mode=args.mode,
            strategy=args.strategy,
            max_reasks=args.max_reasks,
            capture_tokens=args.capture_tokens,
            chat_upstream=args.chat_upstream,
            admin_token=token,
            client_token=secret(args.client_token, "CLIENT_TOKEN"),
            session_secret=secret(args.session_secret, "SESSION_SECRET"),
            upstream_api_key=secret(args.upstream_api_key, "UPSTREAM_API_KEY"),
            cwd=args.cwd,
            body_limit=args.body_limit * 1024 * 1024,
            response_limit=args.response_limit * 1024 * 1024,
            timeout=args.timeout,
            model_aliases=parse_aliases(args.model_alias),
            console_runs=existing_runs(args),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if config.needs_admin_token and not config.admin_token:
        raise UsageError(
            f"refusing to listen on {config.host} (beyond loopback) without --admin-token"
        )
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    import asyncio

    from safeagents.store import StoreError, check_store, redacted

    registry = default_registry()
    rules = load_rules(args, err, detectors=registry.detectors)
    try:
        asyncio.run(check_store(config.store))
    except StoreError as error:
        raise UsageError(str(error)) from None
    keys = "model endpoints need a key" if config.model_auth_required else "no keys"
    err.print(
        f"safeagents serve: http://{config.host}:{config.port} -> {redact_url(config.upstream)}  "
        f"({len(rules.rules)} rules, {config.mode}, {config.strategy}, "
        f"store {redacted(config.store)}, {keys}); "
        f"web console http://{config.host}:{config.port}/ui/",
        highlight=False,
    )
    serve(
        config, firewall=Firewall(rules, registry), workers=args.workers, log_level=args.log_level
    )
    return EXIT_OK


def add_intercept(sub: argparse._SubParsersAction[Parser]) -> None:
    intercept = sub.add_parser(
        "intercept", help="check model API traffic as an HTTPS forward proxy (mitmproxy)"
    )
    add_rule_options(intercept)
    intercept.add_argument("--listen-host", default="127.0.0.1", help="address to listen on")
    intercept.add_argument("--listen-port", type=int, default=8080, help="port to listen on")
    add_enforcement_options(intercept)
    intercept.add_argument("--cwd", default="/workspace", help="agent working directory")
    intercept.add_argument(
        "--response-limit",
        type=int,
        default=32,
        metavar="MIB",
        help="largest model answer read; beyond it the harness gets a 502",
    )
    intercept.add_argument(
        "--confdir", default="~/.mitmproxy", help="mitmproxy's directory (its CA lives there)"
    )
    intercept.add_argument(
        "--ssl-insecure", action="store_true", help="do not verify upstream TLS certificates"
    )
    intercept.add_argument(
        "--log-level",
        choices=("error", "warn", "info", "debug"),
        default="info",
        help="mitmproxy's log level",
    )


def intercept(args: argparse.Namespace, out: Console, err: Console) -> int:
    from safeagents._firewall import Firewall
    from safeagents._registry import default_registry

    if args.max_reasks < 0:
        raise UsageError("--max-reasks must be >= 0")
    if args.response_limit <= 0:
        raise UsageError("--response-limit must be positive")
    variables = parse_var_pairs(args.var)
    registry = default_registry()
    rules = load_rules(args, err, detectors=registry.detectors)
    try:
        from safeagents.intercept import InterceptSettings, run_intercept
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] != "mitmproxy":
            raise
        raise UsageError(
            "safeagents intercept needs mitmproxy: pip install 'safeagents[intercept]'"
        ) from None
    settings = InterceptSettings(
        rules=tuple(rule_paths(args)),
        exclude_rules=tuple(args.exclude_rule),
        vars=variables,
        store=args.store,
        mode=args.mode,
        strategy=args.strategy,
        max_reasks=args.max_reasks,
        cwd=args.cwd,
        response_limit=args.response_limit,
        listen_host=args.listen_host,
        listen_port=args.listen_port,
        confdir=args.confdir,
        ssl_insecure=args.ssl_insecure,
        log_level=args.log_level,
    )
    from safeagents.store import redacted

    ca = Path(args.confdir).expanduser() / "mitmproxy-ca-cert.pem"
    err.print(
        f"safeagents intercept: proxy http://{args.listen_host}:{args.listen_port}  "
        f"({len(rules.rules)} rules, {args.mode}, {args.strategy}, store {redacted(args.store)}); "
        f"clients must trust {ca}",
        highlight=False,
    )
    run_intercept(settings, Firewall(rules, registry))
    return EXIT_OK


def add_sessions(sub: argparse._SubParsersAction[Parser]) -> None:
    sessions = sub.add_parser("sessions", help="inspect and export recorded sessions")
    actions = sessions.add_subparsers(dest="action", required=True, parser_class=Parser)
    listing = actions.add_parser("list", help="list sessions, newest first")
    listing.add_argument("--limit", type=int, default=100)
    show = actions.add_parser(
        "show",
        help="one session's conversation: text, tool calls (blocked ones with the message the "
        "model read), results, findings; --format json gives every turn in full",
    )
    show.add_argument("session_id", metavar="ID", help="the session id, or a unique prefix of it")
    export = actions.add_parser("export", help="write sessions as JSONL for `safeagents check`")
    export.add_argument("session_ids", nargs="*", metavar="ID", help="default: all")
    export.add_argument("--out", metavar="FILE", help="default: standard output")
    for parser in (listing, show, export):
        add_store_option(parser, "the recorded sessions")
    for parser in (listing, show):
        parser.add_argument("--format", choices=("text", "json"), default="text")


def sessions(args: argparse.Namespace, out: Console, err: Console) -> int:
    import asyncio

    from safeagents.store import StoreError, is_postgres, sqlite_path

    if not is_postgres(args.store) and not Path(sqlite_path(args.store)).is_file():
        raise UsageError(f"store not found: {args.store}")
    try:
        return asyncio.run(_sessions_async(args, out))
    except StoreError as error:
        raise UsageError(str(error)) from None


async def _session_by_prefix(store: Store, prefix: str, where: str) -> SessionRecord:
    """The session whose id is ``prefix`` or, failing that, the one id starting with it."""
    session = await store.get_session(prefix)
    if session is not None:
        return session
    matches = [s.id for s in await store.list_sessions(limit=10**9) if s.id.startswith(prefix)]
    if not matches:
        raise UsageError(f"no session {prefix!r} in {where}")
    if len(matches) > 1:
        shown = ", ".join(matches[:5]) + (", …" if len(matches) > 5 else "")
        raise UsageError(
            f"{len(matches)} sessions in {where} start with {prefix!r} ({shown}); "
            "give more of the id"
        )
    found = await store.get_session(matches[0])
    if found is None:  # deleted meanwhile
        raise UsageError(f"no session {prefix!r} in {where}")
    return found


async def _sessions_async(args: argparse.Namespace, out: Console) -> int:
    from safeagents.store import export_line, open_store, print_session, print_sessions

    store = open_store(args.store)
    try:
        if args.action == "list":
            sessions = await store.list_sessions(limit=args.limit)
            if args.format == "json":
                print(json.dumps({"sessions": [s.to_json() for s in sessions]}, indent=2))
            else:
                print_sessions(out, sessions)
            return EXIT_OK
        if args.action == "show":
            found = await _session_by_prefix(store, args.session_id, args.store)
            turns = await store.turns(found.id)
            if args.format == "json":
                document = {**found.to_json(), "turns": [t.to_json() for t in turns]}
                print(json.dumps(document, indent=2))
            else:
                print_session(out, found, turns)
            return EXIT_OK
        ids = list(args.session_ids) or [s.id for s in await store.list_sessions(limit=10**9)]
        lines = []
        for session_id in ids:
            session = await store.get_session(session_id)
            if session is None:
                raise UsageError(f"no session {session_id!r} in {args.store}")
            line = export_line(session, await store.turns(session_id))
            lines.append(json.dumps(line, ensure_ascii=False) + "\n")
        if args.out:
            Path(args.out).write_text("".join(lines), encoding="utf-8")
        else:
            sys.stdout.write("".join(lines))
        return EXIT_OK
    finally:
        await store.close()
