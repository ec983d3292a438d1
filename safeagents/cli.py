"""The ``safeagents`` command line: check, test, lint, explain, serve, sessions, demo, intercept,
and the subcommands plugins add (``safeagents_cli_commands``: the trainer's ``train``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from safeagents import _report

if TYPE_CHECKING:
    from collections.abc import Collection

    from safeagents.rules import RuleSet

__all__ = ["main"]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
_FAIL_LEVELS = {
    "warn": ("warn", "flag", "reject"),
    "flag": ("flag", "reject"),
    "reject": ("reject",),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        Console(stderr=True, soft_wrap=True).print(
            f"[red]error:[/] {escape(message)}", highlight=False
        )
        raise SystemExit(EXIT_USAGE)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="safeagents", description="A tool-call firewall for coding agents.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = sub.add_parser("check", help="audit recorded agent sessions")
    _add_rule_options(check)
    check.add_argument("--harness", help="harness the sessions came from (default: detect)")
    check.add_argument("--cwd", help="agent working directory (default /workspace)")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument(
        "--fail-on",
        choices=tuple(_FAIL_LEVELS),
        default="flag",
        help="lowest finding action that makes the exit status 1 (default: flag)",
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="JSONL/JSON sessions, - for stdin")

    test = sub.add_parser("test", help="run every rule's fixtures")
    test.add_argument("paths", nargs="*", metavar="PATH", help="rule packs (default: bundled)")

    lint = sub.add_parser("lint", help="validate rule files")
    lint.add_argument("paths", nargs="*", metavar="PATH", help="rule packs (default: bundled)")
    lint.add_argument("--var", action="append", default=[], metavar="K=V")

    explain = sub.add_parser("explain", help="print a rule's documentation")
    _add_rule_options(explain)
    explain.add_argument("rule_id", metavar="RULE_ID")
    _add_serve(sub)
    _add_sessions(sub)
    _add_demo(sub)
    _add_intercept(sub)
    _add_plugin_commands(sub)
    return parser


def _add_plugin_commands(sub: argparse._SubParsersAction[_Parser]) -> None:
    from safeagents._registry import default_registry

    default_registry().plugin_manager.hook.safeagents_cli_commands(subparsers=sub)


def _add_serve(sub: argparse._SubParsersAction[_Parser]) -> None:
    serve = sub.add_parser("serve", help="run the intercepting proxy in front of a model server")
    serve.add_argument("--upstream", required=True, metavar="URL", help="model server base URL")
    _add_rule_options(serve)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8787)
    _add_enforcement_options(serve)
    serve.add_argument(
        "--capture-tokens", action="store_true", help="record token ids and logprobs per turn"
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
    serve.add_argument("--workers", type=int, default=1, metavar="N")
    serve.add_argument("--cwd", default="/workspace", help="agent working directory")
    serve.add_argument("--body-limit", type=int, default=32, metavar="MIB")
    serve.add_argument(
        "--response-limit",
        type=int,
        default=32,
        metavar="MIB",
        help="largest upstream answer read (decoded); beyond it the harness gets a 502",
    )
    serve.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS")
    serve.add_argument(
        "--model-alias",
        action="append",
        default=[],
        metavar="HARNESS=MODEL",
        help="ask the upstream for MODEL on HARNESS's requests (repeatable; "
        "changed at run time under /safeagents/v1/aliases)",
    )
    serve.add_argument(
        "--log-level", choices=("critical", "error", "warning", "info", "debug"), default="info"
    )


def _add_sessions(sub: argparse._SubParsersAction[_Parser]) -> None:
    sessions = sub.add_parser("sessions", help="inspect and export recorded sessions")
    actions = sessions.add_subparsers(dest="action", required=True, parser_class=_Parser)
    listing = actions.add_parser("list", help="list sessions, newest first")
    listing.add_argument("--limit", type=int, default=100)
    show = actions.add_parser("show", help="one session's score, turns and findings")
    show.add_argument("session_id", metavar="ID")
    export = actions.add_parser("export", help="write sessions as JSONL for `safeagents check`")
    export.add_argument("session_ids", nargs="*", metavar="ID", help="default: all")
    export.add_argument("--out", metavar="FILE", help="default: standard output")
    for parser in (listing, show, export):
        parser.add_argument("--store", default="safeagents.db", metavar="PATH.db")
    for parser in (listing, show):
        parser.add_argument("--format", choices=("text", "json"), default="text")


def _add_demo(sub: argparse._SubParsersAction[_Parser]) -> None:
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


def _add_enforcement_options(parser: argparse.ArgumentParser) -> None:
    """What ``serve`` and ``intercept`` share: where transcripts go and how blocks are handled."""
    parser.add_argument("--store", default="safeagents.db", metavar="PATH.db")
    parser.add_argument("--mode", choices=("enforce", "monitor"), default="enforce")
    parser.add_argument("--strategy", choices=("reask", "rewrite", "stop"), default="reask")
    parser.add_argument("--max-reasks", type=int, default=3, metavar="N")


def _add_rule_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", action="append", metavar="PATH", help="rule pack or file")
    parser.add_argument("--var", action="append", default=[], metavar="K=V", help="override a var")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    out, err = Console(), Console(stderr=True, soft_wrap=True)
    try:
        handler = {
            "check": _check,
            "test": _test,
            "lint": _lint,
            "explain": _explain,
            "serve": _serve,
            "sessions": _sessions,
            "demo": _demo,
            "intercept": _intercept,
        }
        run: Callable[[argparse.Namespace, Console, Console], int] = (
            handler.get(args.command) or args.run  # a plugin's subcommand
        )
        return run(args, out, err)
    except _UsageError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


class _UsageError(Exception):
    pass


def _parse_vars(pairs: Sequence[str]) -> dict[str, str]:
    from safeagents.rules import parse_vars

    try:
        return parse_vars(pairs)
    except ValueError as problem:
        raise _UsageError(f"--var {problem}") from None


def _parse_aliases(pairs: Sequence[str]) -> dict[str, str]:
    from safeagents._registry import default_registry
    from safeagents.exchange import canonical_aliases

    parsed: dict[str, str] = {}
    for pair in pairs:
        harness, sep, model = pair.partition("=")
        if not sep or not harness.strip() or not model.strip():
            raise _UsageError(f"--model-alias expects HARNESS=MODEL, got {pair!r}")
        parsed[harness] = model.strip()
    try:
        return canonical_aliases(default_registry(), parsed)
    except ValueError as exc:
        raise _UsageError(f"--model-alias: {exc}") from None


def _load_rules(
    paths: Sequence[str] | None,
    var_pairs: Sequence[str],
    err: Console,
    *,
    detectors: Collection[str] | None = None,
) -> RuleSet:
    from safeagents.rules import RuleLoadError, RuleSet

    for path in paths or ():
        if not Path(path).exists():
            raise _UsageError(f"rule path not found: {path}")
    try:
        return RuleSet.load(
            list(paths) if paths else None, vars=_parse_vars(var_pairs), detectors=detectors
        )
    except RuleLoadError as exc:
        for error in exc.errors:
            err.print(str(error), highlight=False, markup=False)
        raise _UsageError(f"{len(exc.errors)} error(s) in rule files") from None


def _check(args: argparse.Namespace, out: Console, err: Console) -> int:
    from safeagents._audit import InputError, SessionReport, audit_session, load_sessions
    from safeagents._firewall import Firewall
    from safeagents._registry import UnknownHarnessError, default_registry

    registry = default_registry()
    firewall = Firewall(_load_rules(args.rules, args.var, err, detectors=registry.detectors))
    if args.harness:
        try:
            harness = firewall.registry.harness(args.harness).name
        except UnknownHarnessError as exc:
            raise _UsageError(str(exc)) from None
    else:
        harness = None
    for file in args.files:
        if file != "-" and not Path(file).is_file():
            raise _UsageError(f"input file not found: {file}")

    reports: list[SessionReport] = []
    input_errors: list[InputError] = []
    for file in args.files:
        sessions, problems = load_sessions(file)
        input_errors.extend(problems)
        for problem in problems:
            err.print(f"[yellow]skipped[/] {escape(str(problem))}", highlight=False)
        reports.extend(audit_session(s, firewall, harness=harness, cwd=args.cwd) for s in sessions)

    if args.format == "json":
        print(json.dumps({"sessions": [r.to_json() for r in reports]}, indent=2))
    else:
        _report.print_check(out, reports, input_errors)
    if input_errors:
        return EXIT_USAGE
    failing = _FAIL_LEVELS[args.fail_on]
    if any(f.action in failing for r in reports for f in r.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def _test(args: argparse.Namespace, out: Console, err: Console) -> int:
    from safeagents._firewall import Firewall
    from safeagents.rules import RuleLoadError, run_fixtures

    try:
        results = run_fixtures(args.paths or None, checker=Firewall)
    except RuleLoadError as exc:
        for error in exc.errors:
            err.print(str(error), highlight=False, markup=False)
        return EXIT_USAGE
    _report.print_fixtures(out, results)
    return EXIT_OK if all(r.passed for r in results) else EXIT_FINDINGS


def _lint(args: argparse.Namespace, out: Console, err: Console) -> int:
    from safeagents._registry import default_registry
    from safeagents.rules import RuleLoadError, RuleSet

    try:
        rules = RuleSet.load(
            args.paths or None,
            vars=_parse_vars(args.var),
            detectors=default_registry().detectors,
        )
    except RuleLoadError as exc:
        for error in exc.errors:
            err.print(str(error), highlight=False, markup=False)
        err.print(f"[red]{len(exc.errors)} error(s)[/]")
        return EXIT_FINDINGS
    out.print(f"[green]ok[/] {len(rules.rules)} rules in {len(rules.packs)} pack(s)")
    return EXIT_OK


def _explain(args: argparse.Namespace, out: Console, err: Console) -> int:
    rules = _load_rules(args.rules, args.var, err)
    try:
        rule = rules.get(args.rule_id)
    except KeyError as exc:
        raise _UsageError(str(exc.args[0]) if exc.args else str(exc)) from None
    _report.print_rule(out, rule)
    return EXIT_OK


def _serve(args: argparse.Namespace, out: Console, err: Console) -> int:
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
            rules=tuple(args.rules or ()),
            vars=_parse_vars(args.var),
            host=args.host,
            port=args.port,
            store=args.store,
            mode=args.mode,
            strategy=args.strategy,
            max_reasks=args.max_reasks,
            capture_tokens=args.capture_tokens,
            admin_token=token,
            client_token=secret(args.client_token, "CLIENT_TOKEN"),
            session_secret=secret(args.session_secret, "SESSION_SECRET"),
            upstream_api_key=secret(args.upstream_api_key, "UPSTREAM_API_KEY"),
            cwd=args.cwd,
            body_limit=args.body_limit * 1024 * 1024,
            response_limit=args.response_limit * 1024 * 1024,
            timeout=args.timeout,
            model_aliases=_parse_aliases(args.model_alias),
        )
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    if config.needs_admin_token and not config.admin_token:
        raise _UsageError(
            f"refusing to listen on {config.host} (beyond loopback) without --admin-token"
        )
    if args.workers < 1:
        raise _UsageError("--workers must be at least 1")
    registry = default_registry()
    rules = _load_rules(args.rules, args.var, err, detectors=registry.detectors)
    keys = "model endpoints need a key" if config.model_auth_required else "no keys"
    err.print(
        f"safeagents serve: http://{config.host}:{config.port} -> {redact_url(config.upstream)}  "
        f"({len(rules.rules)} rules, {config.mode}, {config.strategy}, store {config.store}, "
        f"{keys})",
        highlight=False,
    )
    serve(
        config, firewall=Firewall(rules, registry), workers=args.workers, log_level=args.log_level
    )
    return EXIT_OK


def _add_intercept(sub: argparse._SubParsersAction[_Parser]) -> None:
    intercept = sub.add_parser(
        "intercept", help="check model API traffic as an HTTPS forward proxy (mitmproxy)"
    )
    _add_rule_options(intercept)
    intercept.add_argument("--listen-host", default="127.0.0.1")
    intercept.add_argument("--listen-port", type=int, default=8080)
    _add_enforcement_options(intercept)
    intercept.add_argument("--cwd", default="/workspace", help="agent working directory")
    intercept.add_argument(
        "--confdir", default="~/.mitmproxy", help="mitmproxy's directory (its CA lives there)"
    )
    intercept.add_argument(
        "--ssl-insecure", action="store_true", help="do not verify upstream TLS certificates"
    )
    intercept.add_argument(
        "--log-level", choices=("error", "warn", "info", "debug"), default="info"
    )


def _intercept(args: argparse.Namespace, out: Console, err: Console) -> int:
    from safeagents._firewall import Firewall
    from safeagents._registry import default_registry

    if args.max_reasks < 0:
        raise _UsageError("--max-reasks must be >= 0")
    variables = _parse_vars(args.var)
    registry = default_registry()
    rules = _load_rules(args.rules, args.var, err, detectors=registry.detectors)
    try:
        from safeagents.intercept import InterceptSettings, run_intercept
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] != "mitmproxy":
            raise
        raise _UsageError(
            "safeagents intercept needs mitmproxy: pip install 'safeagents[intercept]'"
        ) from None
    settings = InterceptSettings(
        rules=tuple(args.rules or ()),
        vars=variables,
        store=args.store,
        mode=args.mode,
        strategy=args.strategy,
        max_reasks=args.max_reasks,
        cwd=args.cwd,
        listen_host=args.listen_host,
        listen_port=args.listen_port,
        confdir=args.confdir,
        ssl_insecure=args.ssl_insecure,
        log_level=args.log_level,
    )
    ca = Path(args.confdir).expanduser() / "mitmproxy-ca-cert.pem"
    err.print(
        f"safeagents intercept: proxy http://{args.listen_host}:{args.listen_port}  "
        f"({len(rules.rules)} rules, {args.mode}, {args.strategy}, store {args.store}); "
        f"clients must trust {ca}",
        highlight=False,
    )
    run_intercept(settings, Firewall(rules, registry))
    return EXIT_OK


def _sessions(args: argparse.Namespace, out: Console, err: Console) -> int:
    import asyncio

    if not Path(args.store).is_file():
        raise _UsageError(f"store not found: {args.store}")
    return asyncio.run(_sessions_async(args, out))


async def _sessions_async(args: argparse.Namespace, out: Console) -> int:
    from safeagents.store import SQLiteStore, export_line, print_session, print_sessions

    store = SQLiteStore(args.store)
    try:
        if args.action == "list":
            sessions = await store.list_sessions(limit=args.limit)
            if args.format == "json":
                print(json.dumps({"sessions": [s.to_json() for s in sessions]}, indent=2))
            else:
                print_sessions(out, sessions)
            return EXIT_OK
        if args.action == "show":
            session = await store.get_session(args.session_id)
            if session is None:
                raise _UsageError(f"no session {args.session_id!r} in {args.store}")
            turns = await store.turns(session.id)
            if args.format == "json":
                document = {**session.to_json(), "turns": [t.to_json() for t in turns]}
                print(json.dumps(document, indent=2))
            else:
                print_session(out, session, turns)
            return EXIT_OK
        ids = list(args.session_ids) or [s.id for s in await store.list_sessions(limit=10**9)]
        lines = []
        for session_id in ids:
            session = await store.get_session(session_id)
            if session is None:
                raise _UsageError(f"no session {session_id!r} in {args.store}")
            line = export_line(session, await store.turns(session_id))
            lines.append(json.dumps(line, ensure_ascii=False) + "\n")
        if args.out:
            Path(args.out).write_text("".join(lines), encoding="utf-8")
        else:
            sys.stdout.write("".join(lines))
        return EXIT_OK
    finally:
        await store.close()


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
        raise _UsageError(str(exc)) from None
    return EXIT_OK if result.ok else EXIT_FINDINGS


if __name__ == "__main__":
    raise SystemExit(main())
