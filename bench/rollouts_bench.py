"""Rollouts per hour: the real pi harness in the local bubblewrap sandbox, through the proxy
(``safeagents serve --capture-tokens``), driven by the scripted model, with the trainer's
rollout runner (as ``safeagents rollouts`` and ``safeagents train`` run them).

For each concurrency it runs that many rollouts of one bundled task (one wave: every session
live at once) and prints rollouts per hour, the median wall time of each phase of a rollout
(sandbox create, agent, verifier, close) and CPU seconds per rollout by component: the proxy
and the scripted model (each its own process), the sandboxed commands (bubblewrap and its
relay, the harness, the verifier, sampled from ``/proc``) and the driver (this process:
scheduling, the store, the sampler), and the whole machine's CPU use (the machine may be
shared). Baselines in the same run: concurrency 1, and the same task without the sandbox
(``HarnessEnvironment``, plain subprocesses) at the first concurrency.

    PYTHONPATH=. .venv/bin/python bench/rollouts_bench.py [--concurrency 8,16,48] [--task ID]
        [--baseline N] [--budget SECONDS]

Rollouts cut by the budget are not counted: a cut run's rate is of the rollouts that
finished in its wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from safeagents.store import SQLiteStore
from trainer import load_reward
from trainer._environment import Environment
from trainer._harness_env import HarnessEnvironment
from trainer._runner import ProxyAdmin, RolloutRunner
from trainer._sandbox_env import SandboxEnvironment
from trainer._scheduler import RolloutResult
from trainer.sandbox import LocalBackend, copy_tree, remove_tree
from trainer.tasks import bundled_tasks_path, load_tasks

SCRIPT = [
    {"shell": "ls"},
    {"shell": "grep -n 'def camelize' -A3 inflection/__init__.py"},
    "I looked at the code.",
]
PHASES = ("create", "agent", "verify", "close")
KINDS = ("harness", "verifier", "sandbox", "proxy", "model", "other")
TICK = os.sysconf("SC_CLK_TCK")


class CpuSampler:
    """CPU seconds of this process's descendants by component, from ``/proc`` every
    ``interval`` seconds: each process's own time, the last value seen (a process that
    lived less than ``interval`` is missed, so the figures are lower bounds). A process is
    the harness's, the verifier's or the sandbox's (bubblewrap, the relay) by its own command
    line or its nearest classified ancestor's; the proxy and the model by pid; ``other`` is
    the rest (workspace copies). This process itself is the driver, measured apart."""

    def __init__(self, named: dict[int, str], interval: float = 0.25) -> None:
        self.named = named
        self.interval = interval
        self.seen: dict[tuple[int, str], tuple[str, float]] = {}
        self._kinds: dict[tuple[int, str], str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def totals(self) -> dict[str, float]:
        totals = dict.fromkeys(KINDS, 0.0)
        for kind, seconds in list(self.seen.values()):
            totals[kind] += seconds
        return totals

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        table: dict[int, tuple[int, str, float]] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            cpu = (int(fields[11]) + int(fields[12])) / TICK
            table[int(entry.name)] = (int(fields[1]), fields[19], cpu)
        me = os.getpid()
        for pid, (_, started, cpu) in table.items():
            if pid == me:
                continue
            kind = self._kind(pid, table, me)
            if kind is not None:
                self.seen[(pid, started)] = (kind, cpu)

    def _kind(self, pid: int, table: dict[int, tuple[int, str, float]], me: int) -> str | None:
        """The component of ``pid``, ``None`` when it is not a descendant of this process."""
        chain = []
        current = pid
        while current in table and current != me:
            key = (current, table[current][1])
            if key in self._kinds:
                break
            chain.append(key)
            current = table[current][0]
        else:
            if current != me:
                return None
        kind = self._kinds.get((current, table[current][1]), "other") if current != me else "other"
        for key in reversed(chain):
            kind = self.named.get(key[0]) or _classify(key[0]) or kind
            self._kinds[key] = kind
        return kind


def _classify(pid: int) -> str | None:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return None
    if "/tests/" in command:
        return "verifier"
    if "/.harnesses/" in command or command.startswith(("node ", "pi ")):
        return "harness"
    if command.startswith("bwrap ") or "relay.py" in command:
        return "sandbox"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_http(url: str, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"{what} did not answer {url} in 60 s")


@contextmanager
def _services(
    scratch: Path,
) -> Iterator[tuple[str, subprocess.Popen[bytes], subprocess.Popen[bytes]]]:
    """The scripted model and the proxy, each its own process: (proxy URL, model, proxy)."""
    script = scratch / "script.json"
    script.write_text(json.dumps(SCRIPT))
    model_port, proxy_port = _free_port(), _free_port()
    python = sys.executable
    model = subprocess.Popen(
        [python, "-m", "safeagents.scripted", str(script), "--port", str(model_port)],
        stdout=subprocess.DEVNULL,
    )
    proxy = subprocess.Popen(
        [python, "-m", "safeagents.cli", "serve", "--upstream", f"http://127.0.0.1:{model_port}",
         "--port", str(proxy_port), "--store", str(scratch / "bench.db"), "--capture-tokens",
         "--log-level", "warning"],
    )  # fmt: skip
    try:
        _wait_http(f"http://127.0.0.1:{model_port}/v1/models", model, "the scripted model")
        proxy_url = f"http://127.0.0.1:{proxy_port}"
        _wait_http(f"{proxy_url}/safeagents/v1/sessions", proxy, "the proxy")
        yield proxy_url, model, proxy
    finally:
        for process in (proxy, model):
            process.terminate()
            process.wait(timeout=30)


@dataclass
class Level:
    label: str
    concurrency: int
    results: list[RolloutResult]
    wall: float
    cpu: dict[str, float]
    machine: float
    """The whole machine's CPU use (``/proc/stat``), other people's work included."""

    @property
    def scored(self) -> int:
        return sum(result.status == "scored" for result in self.results)

    def row(self) -> str:
        count = max(len(self.results), 1)
        phases = []
        for phase in PHASES:
            values = [
                float(result.outcome["timings"][phase])
                for result in self.results
                if result.outcome and phase in result.outcome.get("timings", {})
            ]
            phases.append(f"{statistics.median(values):.2f}" if values else "-")
        cpu = " | ".join(f"{self.cpu[kind] / count:.2f}" for kind in (*KINDS, "driver"))
        busy = sum(self.cpu.values()) / self.wall / (os.cpu_count() or 1) * 100
        return (
            f"| {self.label} | {self.concurrency} | {self.scored}/{len(self.results)} | "
            f"{self.wall:.1f} | {self.scored / self.wall * 3600:.0f} | {' | '.join(phases)} | "
            f"{cpu} | {busy:.0f}% | {self.machine * 100:.0f}% |"
        )


HEADER = (
    "| run | concurrency | scored | wall s | rollouts/hour | create s | agent s | verify s "
    "| close s | CPU s/rollout: harness | verifier | sandbox | proxy | model | other "
    "| driver | ours busy | machine busy |\n" + "|---" * 19 + "|"
)


async def _level(
    label: str,
    environment: Environment,
    count: int,
    concurrency: int,
    proxy_url: str,
    store: SQLiteStore,
    sampler: CpuSampler,
    deadline: float,
) -> Level:
    runner = RolloutRunner(
        environment,
        proxy_url=proxy_url,
        admin=ProxyAdmin(f"{proxy_url}/safeagents/v1"),
        store=store,
        reward=load_reward(entry_points=False),
        group_size=count,
        model="scripted",
        temperature=1.0,
        max_tokens=512,
        concurrency=concurrency,
    )
    results: list[RolloutResult] = []
    sampler.sample()
    before = {**sampler.totals(), "driver": _self_cpu()}
    machine = _machine_cpu()
    started = time.monotonic()

    async def run() -> None:
        async for _ in runner.scheduler(on_result=results.append).groups(environment.tasks()):
            pass

    try:
        await asyncio.wait_for(run(), timeout=max(deadline - time.monotonic(), 1.0))
    except TimeoutError:
        print(f"  {label} at {concurrency}: out of time, {len(results)} of {count} finished")
    wall = time.monotonic() - started
    sampler.sample()
    after = {**sampler.totals(), "driver": _self_cpu()}
    busy, total = (now - then for now, then in zip(_machine_cpu(), machine, strict=True))
    cpu = {kind: after[kind] - before[kind] for kind in after}
    level = Level(label, concurrency, results, wall, cpu, busy / max(total, 1))
    for result in results:
        if result.status != "scored":
            print(f"  {label}: rollout {result.index} {result.status}: {result.error}")
    print(level.row(), flush=True)
    return level


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _machine_cpu() -> tuple[int, int]:
    """Busy and total jiffies of every core since boot (``/proc/stat``)."""
    values = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


async def main(concurrencies: Sequence[int], task_dir: Path, baseline: int, budget: float) -> None:
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
        f"task {task_dir.name}, load average before: {_load()}",
        flush=True,
    )
    scratch = Path(tempfile.mkdtemp(prefix="rollouts-bench-", dir=Path.home()))
    single = scratch / "tasks"
    single.mkdir()
    copy_tree(task_dir, single / task_dir.name)
    try:
        with _services(scratch) as (proxy_url, model, proxy):
            store = SQLiteStore(scratch / "bench.db")
            sandboxed = SandboxEnvironment(
                harness="pi",
                tasks_dir=single,
                backend=LocalBackend(scratch / "sandboxes"),
                state_dir=scratch / "state",
            )
            plain = HarnessEnvironment(
                harness="pi", tasks_dir=single, workspaces_dir=scratch / "workspaces"
            )
            print(HEADER, flush=True)
            with CpuSampler({model.pid: "model", proxy.pid: "proxy"}) as sampler:
                try:
                    run = (proxy_url, store, sampler, time.monotonic() + budget)
                    await _level("sandbox", sandboxed, baseline, 1, *run)
                    first = concurrencies[0]
                    await _level("no sandbox", plain, first, first, *run)
                    for concurrency in concurrencies:
                        await _level("sandbox", sandboxed, concurrency, concurrency, *run)
                finally:
                    await store.close()
    finally:
        print(f"load average after: {_load()}")
        remove_tree(scratch)


def _positive_list(text: str) -> list[int]:
    values = [int(part) for part in re.split(r"[,\s]+", text.strip()) if part]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("a comma-separated list of positive integers")
    return values


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=_positive_list, default=[8, 16, 48])
    parser.add_argument("--task", default="inflection-repair-001", help="a bundled task's id")
    parser.add_argument("--tasks", type=Path, default=None, help="default: the bundled suite")
    parser.add_argument("--baseline", type=int, default=2, help="rollouts at concurrency 1")
    parser.add_argument(
        "--budget", type=float, default=300.0, help="seconds for all runs; the rest is cut"
    )
    options = parser.parse_args()
    (task,) = load_tasks((options.tasks or bundled_tasks_path()) / options.task)
    asyncio.run(main(options.concurrency, task.root, options.baseline, options.budget))
