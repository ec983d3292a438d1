"""Paired A/B of checkouts' proxies on a shared, noisy machine.

The proxies (bundled packs, one worker each, core 0) run at once against one scripted
upstream (core 1), and the upstream is also called directly. At concurrency 1 the load
generator sends each scenario's request to all of them in turn, in a new random order each
round, so that whatever else the machine is doing falls on all alike. Reported per scenario
and checkout: p50 / p10 and the added p50 over direct, the median of the paired per-round
differences from the first checkout (the figure least moved by other load), and the proxy's
CPU time per request (from ``/proc``; its inverse bounds the throughput of one worker).

    .venv/bin/python -m bench.proxy.paired /work/base-checkout /work/this-checkout --rounds 1500

Each checkout's proxy runs from its own folder (``python -m safeagents.cli`` there), with
``SAFEAGENTS_LOAD_PLUGINS`` empty and ``PYTHONHASHSEED`` 0 unless they are already set. The
proxies start in a random order: the one started first has run up to 0.09 ms slower with the
same code, so a difference that a single run shows should hold over a second run too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.proxy.loadgen import Target, _Client, _connect, _exchange, request_bytes
from bench.proxy.measure import LATENCY_SCENARIOS, bodies_for
from bench.proxy.systems import REPO, free_port, pinned, wait_ready

__all__ = ["Proxy", "main", "paired_round", "summary_line"]

SCENARIOS = ("nonstream-100B", "nonstream-10KB", "stream-100B")
_HEADERS = (("authorization", "Bearer sk-upstream-key"),)


@dataclass(slots=True)
class Proxy:
    name: str
    port: int
    process: subprocess.Popen[bytes] | None

    def cpu_seconds(self) -> float:
        if self.process is None:
            return 0.0
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_proxy(name: str, tree: Path, upstream_port: int, work: Path) -> Proxy:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONUNBUFFERED": "1"}
    env.setdefault("SAFEAGENTS_LOAD_PLUGINS", "")
    env.setdefault("PYTHONHASHSEED", "0")  # the same dict and set layouts in every proxy
    command = [sys.executable, "-m", "safeagents.cli", "serve"]
    command += ["--upstream", f"http://127.0.0.1:{upstream_port}", "--port", str(port)]
    command += ["--store", str(work / f"{name}.db"), "--workers", "1"]
    with (work / f"{name}.log").open("ab") as log:
        process = subprocess.Popen(
            pinned("0", command), cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    wait_ready(port, _HEADERS, process, time.perf_counter(), 120)
    return Proxy(name, port, process)


def _start_upstream() -> tuple[subprocess.Popen[bytes], int]:
    command = [sys.executable, "-m", "bench.proxy.upstream", "--port", "0"]
    command += ["--first-token-delay-ms", "5", "--chunk-delay-ms", "0.5"]
    process = subprocess.Popen(
        pinned("1", command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=REPO
    )
    assert process.stdout is not None
    return process, int(process.stdout.readline().split()[1])


async def paired_round(
    clients: dict[str, _Client], targets: dict[str, Target], payload: dict[str, bytes]
) -> dict[str, float]:
    """One request to each system, in a random order: ms each (NaN on failure)."""
    order = list(clients)
    random.shuffle(order)
    result: dict[str, float] = {}
    for name in order:
        now = time.perf_counter()
        sample = await _exchange(clients[name], targets[name], payload[name], now, 10.0)
        result[name] = float("nan") if sample.error else sample.latency * 1000
    return result


def summary_line(scenario: str, rounds: list[dict[str, float]], names: list[str]) -> str:
    """Each system's p50 (added over direct) and p10, and its paired difference from the
    first (ms)."""
    base = names[0]
    good = [r for r in rounds if all(v == v for v in r.values())]
    column = {name: sorted(r[name] for r in good) for name in ("direct", *names)}
    p50 = {name: statistics.median(values) for name, values in column.items()}
    p10 = {name: values[len(values) // 10] for name, values in column.items()}
    parts = [f"{scenario:16} n={len(good):5d}"]
    for name in names:
        text = f"{name}: p50 {p50[name]:.2f} (+{p50[name] - p50['direct']:.2f}) p10 {p10[name]:.2f}"
        if name != base:
            text += f" paired {statistics.median(r[name] - r[base] for r in good):+.3f}"
        parts.append(text)
    return " | ".join(parts)


async def _run(proxies: list[Proxy], direct_port: int, rounds: int) -> None:
    targets = {"direct": Target("127.0.0.1", direct_port, headers=_HEADERS)}
    targets |= {p.name: Target("127.0.0.1", p.port, headers=_HEADERS) for p in proxies}
    clients = {name: await _connect(target) for name, target in targets.items()}
    names = [proxy.name for proxy in proxies]
    for scenario in SCENARIOS:
        shape, stream, history = LATENCY_SCENARIOS[scenario]
        body = bodies_for(shape, stream, history)[0]
        payload = {name: request_bytes(t, body) for name, t in targets.items()}
        for _ in range(50):
            await paired_round(clients, targets, payload)
        cpu = {p.name: p.cpu_seconds() for p in proxies}
        results = [await paired_round(clients, targets, payload) for _ in range(rounds)]
        used = {p.name: (p.cpu_seconds() - cpu[p.name]) / rounds * 1000 for p in proxies}
        cpu_text = ", ".join(f"{name} {ms:.2f}" for name, ms in used.items())
        print(f"{summary_line(scenario, results, names)} | CPU ms/request {cpu_text}", flush=True)
    for client in clients.values():
        client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", type=Path, nargs="+", help="the base first, then others")
    parser.add_argument("--rounds", type=int, default=1_000, help="rounds per scenario")
    args = parser.parse_args(argv)
    if (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {1})
    upstream, upstream_port = _start_upstream()
    proxies: list[Proxy] = []
    try:
        with tempfile.TemporaryDirectory(prefix="safeagents-paired-") as tmp:
            named = [(chr(ord("A") + i), tree) for i, tree in enumerate(args.checkouts)]
            for name, tree in random.sample(named, len(named)):
                proxies.append(_start_proxy(name, tree.resolve(), upstream_port, Path(tmp)))
            proxies.sort(key=lambda proxy: proxy.name)
            asyncio.run(_run(proxies, upstream_port, args.rounds))
    finally:
        _stop(proxies, upstream)
    return 0


def _stop(proxies: list[Proxy], upstream: subprocess.Popen[bytes]) -> None:
    for proxy in proxies:
        if proxy.process is not None:
            proxy.process.terminate()
            proxy.process.wait(15)
    upstream.terminate()
    upstream.wait(5)


if __name__ == "__main__":
    sys.exit(main())
