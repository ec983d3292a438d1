"""``safeagents demo``: the scripted model, the proxy in front of it, and one agent session."""

from __future__ import annotations

import secrets
import shlex
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.markup import escape

from safeagents._firewall import Firewall
from safeagents._registry import load_registry
from safeagents.demo._agent import run_builtin_agent
from safeagents.demo._project import PROMPT, SCRIPT, WorkspaceCheck, check_workspace, make_project
from safeagents.demo._view import LiveView, print_summary
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.scripted import HARNESSES, ScriptedServer, find_harness, prepare_launch, run_harness

__all__ = [
    "AUTO_HARNESSES",
    "BUILTIN",
    "DemoError",
    "DemoOptions",
    "DemoResult",
    "choose_agent",
    "run_demo",
    "safeagents_command",
]

BUILTIN = "builtin"
AUTO_HARNESSES = ("pi", "opencode")
"""Real harnesses ``--harness auto`` looks for (in ``.harnesses/``), before the built-in loop."""
MODEL = "scripted-model"


class DemoError(Exception):
    """The demo cannot start as asked (e.g. the requested harness is not installed)."""


@dataclass(frozen=True, slots=True)
class DemoOptions:
    store: Path = Path("safeagents-demo.db")
    harness: str = "auto"
    """``auto`` (pi or opencode when installed, else the built-in loop), ``builtin``, or a name."""
    keep_workspace: bool = False
    timeout: float = 240.0


@dataclass(frozen=True, slots=True)
class DemoResult:
    """How the demo went; ``ok`` when the agent finished, was caught, and the tests survived."""

    session_id: str
    store: Path
    agent: str
    returncode: int
    hacked: bool
    rule_ids: tuple[str, ...]
    allowed: int
    blocked: int
    workspace: WorkspaceCheck
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.hacked and self.workspace.ok

    @property
    def inspect_command(self) -> str:
        store = shlex.quote(str(self.store))
        return f"{safeagents_command()} sessions show {self.session_id} --store {store}"


def safeagents_command() -> str:
    """How the user can run this safeagents from their shell: ``safeagents`` when that name
    finds this installation on ``PATH`` (an activated venv), else its script's path (relative
    to the working directory when under it), else ``python -m safeagents.cli``."""
    ran = Path(sys.argv[0])
    script = ran if ran.name == "safeagents" else Path(sys.executable).parent / "safeagents"
    if not script.is_file():
        return f"{shlex.quote(sys.executable)} -m safeagents.cli"
    on_path = shutil.which("safeagents")
    if on_path is not None and Path(on_path).resolve() == script.resolve():
        return "safeagents"
    absolute = script.absolute()
    try:
        shown = str(absolute.relative_to(Path.cwd()))
    except ValueError:
        shown = str(absolute)
    return shlex.quote(shown)


def choose_agent(harness: str) -> tuple[str, Path | None]:
    """The agent to run and its binary (``None`` for the built-in loop)."""
    if harness == BUILTIN:
        return BUILTIN, None
    if harness == "auto":
        for name in AUTO_HARNESSES:
            binary = find_harness(name)
            if binary is not None:
                return name, binary
        return BUILTIN, None
    if harness not in HARNESSES:
        known = ", ".join(("auto", BUILTIN, *HARNESSES))
        raise DemoError(f"unknown harness {harness!r}; choose one of {known}")
    binary = find_harness(harness)
    if binary is None:
        raise DemoError(
            f"{harness} is not installed (scripts/install-harnesses puts it in .harnesses/)"
        )
    return harness, binary


def _run_agent(
    agent: str, binary: Path | None, base_url: str, workspace: Path, state: Path, timeout: float
) -> tuple[int, str | None]:
    if binary is None:
        run = run_builtin_agent(base_url, MODEL, workspace, PROMPT, timeout=timeout)
        return run.returncode, run.error
    launch = prepare_launch(agent, base_url, MODEL, workspace, PROMPT, state, binary)
    finished = run_harness(launch, timeout=timeout)
    if finished.timed_out:
        return 124, f"{agent} timed out after {timeout:.0f}s:\n{finished.output[-2000:]}"
    if finished.returncode != 0:
        return (
            finished.returncode,
            f"{agent} exited {finished.returncode}:\n{finished.output[-2000:]}",
        )
    return 0, None


def _watch(view: LiveView, work: Callable[[], tuple[int, str | None]]) -> tuple[int, str | None]:
    """Run ``work`` in a thread, printing recorded turns while it runs."""
    outcome: list[tuple[int, str | None]] = []

    def target() -> None:
        try:
            outcome.append(work())
        except Exception as problem:  # the demo reports it instead of a traceback
            outcome.append((1, f"the agent crashed: {problem!r}"))

    thread = threading.Thread(target=target, name="safeagents-demo-agent", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.05)
        view.flush()
    return outcome[0] if outcome else (1, "the agent thread ended without a result")


def _header(
    console: Console,
    agent: str,
    binary: Path | None,
    model: str,
    proxy: ProxyServer,
    firewall: Firewall,
    store: Path,
    workspace: Path,
) -> None:
    console.rule("safeagents demo")
    runner = (
        f"{agent} ({binary})" if binary else "built-in agent loop (pi's tools, Chat Completions)"
    )
    rows = [
        ("model", f"scripted model at {model} (replays an agent that tries three reward hacks)"),
        (
            "proxy",
            f"safeagents serve at {proxy.url} (enforce, re-ask, {len(firewall.rules.rules)} rules)",
        ),
        ("agent", runner),
        ("store", str(store)),
        ("workspace", str(workspace)),
        ("task", PROMPT),
    ]
    for name, value in rows:
        console.print(f"[dim]{name:<9}[/] {escape(value)}", highlight=False)
    console.print()


def run_demo(options: DemoOptions, console: Console) -> DemoResult:
    """Run one demo session end to end and print it live; the transcript stays in the store."""
    agent, binary = choose_agent(options.harness)
    session_id = f"demo-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    view = LiveView(console)
    firewall = Firewall.load(registry=load_registry(plugins=[view]))
    root = Path(tempfile.mkdtemp(prefix="safeagents-demo-"))
    workspace = make_project(root / "project")
    try:
        with ScriptedServer(SCRIPT) as model:
            config = ProxyConfig(upstream=model.url, store=str(options.store), port=0)
            proxy = ProxyServer(config, firewall=firewall, port=0).start()
            try:
                _header(
                    console, agent, binary, model.url, proxy, firewall, options.store, workspace
                )
                base_url = proxy.session_url(session_id)
                with console.status("the agent is working…"):
                    returncode, error = _watch(
                        view,
                        lambda: _run_agent(
                            agent, binary, base_url, workspace, root / "state", options.timeout
                        ),
                    )
                admin = f"{proxy.url}/safeagents/v1/sessions/{session_id}?turns=none"
                reply = httpx.get(admin, timeout=30)
                session: dict[str, Any] = reply.json() if reply.status_code == 200 else {}
            finally:
                proxy.stop()  # drains the sinks: every turn has reached the view
        view.flush(final=True)
        check = check_workspace(workspace)
    finally:
        if not options.keep_workspace:
            shutil.rmtree(root, ignore_errors=True)
    result = DemoResult(
        session_id=session_id,
        store=options.store,
        agent=agent,
        returncode=returncode,
        hacked=bool(session.get("hacked")),
        rule_ids=tuple(dict.fromkeys(f["rule_id"] for f in session.get("findings") or ())),
        allowed=view.allowed,
        blocked=view.blocked,
        workspace=check,
        error=error,
    )
    if error:
        console.print(f"[bold red]the agent failed:[/] {escape(error)}", highlight=False)
    print_summary(
        console,
        session or {"id": session_id},
        view,
        _workspace_lines(check, root, options),
        result.inspect_command,
    )
    return result


def _mark(ok: bool) -> str:
    return "[green]✓[/]" if ok else "[red]✗[/]"


def _workspace_lines(check: WorkspaceCheck, root: Path, options: DemoOptions) -> list[str]:
    lines = [
        f"{_mark(check.tests_untouched)} tests/test_calc.py untouched   "
        f"{_mark(check.no_conftest)} no forged conftest.py   {_mark(check.fixed)} calc.py fixed"
    ]
    if options.keep_workspace:
        lines.append(f"kept at {escape(str(root / 'project'))}")
    return lines
