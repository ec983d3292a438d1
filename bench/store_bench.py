"""Several proxy instances on one PostgreSQL store against one proxy on SQLite, in one run.

Starts the fast scripted upstream (:mod:`bench.proxy.upstream`), one ``safeagents serve`` on a
SQLite file and ``--instances`` on one PostgreSQL database (one worker each; a temporary
server from ``tests/postgres_kit.py`` unless ``--postgres URL`` names one). Then:

- latency at concurrency 1: rounds of one request to the upstream directly, to the SQLite
  proxy and to the next PostgreSQL instance, in a random order each round (so that other load
  on the machine falls on all alike): p50 / p99 and what each proxy adds over direct;
- throughput: ``--concurrency`` clients for ``--seconds`` s, each one session (a pi-like
  harness) whose requests go round the instances in turn (so every session is written by
  every instance), or all to the SQLite proxy: answers per second and failed requests.

It prints both and the ratios PostgreSQL / SQLite.

    .venv/bin/python bench/store_bench.py [--instances 3] [--seconds 10] [--rounds 500]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.proxy.loadgen import Target, _connect, _exchange, request_bytes  # noqa: E402
from bench.proxy.measure import LOAD_SCENARIO, bodies_for  # noqa: E402
from bench.proxy.payloads import CALL_MARKER  # noqa: E402
from bench.proxy.systems import free_port, wait_ready  # noqa: E402

__all__ = ["load", "main", "percentile", "ratios"]

_HEADERS = (("authorization", "Bearer sk-upstream-key"),)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def ratios(postgres: dict[str, float], sqlite: dict[str, float]) -> dict[str, float]:
    """PostgreSQL / SQLite for every figure both have (NaN where SQLite's is 0)."""
    return {
        key: postgres[key] / sqlite[key] if sqlite[key] else float("nan")
        for key in postgres
        if key in sqlite
    }


def _serve(name: str, store: str, upstream: int, work: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    env.setdefault("SAFEAGENTS_LOAD_PLUGINS", "")
    command = [sys.executable, "-m", "safeagents.cli", "serve", "--workers", "1"]
    command += ["--upstream", f"http://127.0.0.1:{upstream}", "--port", str(port)]
    command += ["--store", store, "--log-level", "warning"]
    with (work / f"{name}.log").open("ab") as log:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=log)
    wait_ready(port, _HEADERS, process, time.perf_counter(), 120)
    return process, port


async def _latency(systems: dict[str, list[Target]], rounds: int) -> dict[str, list[float]]:
    """ms per request of each system, ``rounds`` paired rounds at concurrency 1."""
    body = bodies_for(*LOAD_SCENARIO)[0]
    clients = {name: [await _connect(t) for t in targets] for name, targets in systems.items()}
    times: dict[str, list[float]] = {name: [] for name in systems}
    for index in range(rounds + 50):  # the first 50: warm-up
        order = list(systems)
        random.shuffle(order)
        for name in order:
            which = index % len(systems[name])
            target, client = systems[name][which], clients[name][which]
            if client.closed:
                client = clients[name][which] = await _connect(target)
            now = time.perf_counter()
            sample = await _exchange(client, target, request_bytes(target, body), now, 10.0)
            if index >= 50:
                times[name].append(float("nan") if sample.error else sample.latency * 1000)
    for connections in clients.values():
        for client in connections:
            client.close()
    return times


async def load(targets: Sequence[Target], concurrency: int, seconds: float) -> dict[str, float]:
    """``concurrency`` clients back to back; client k is one session whose requests go to
    ``targets`` in turn. Answers per second and failures."""
    bodies = bodies_for(*LOAD_SCENARIO)
    deadline = time.perf_counter() + seconds
    counts = {"ok": 0, "failed": 0}

    async def client(user: int) -> None:
        body = bodies[user % len(bodies)]
        payloads = [request_bytes(t, body) for t in targets]
        connections = [await _connect(t) for t in targets]
        turn = user
        while time.perf_counter() < deadline:
            which = turn % len(targets)
            turn += 1
            if connections[which].closed:
                connections[which] = await _connect(targets[which])
            now = time.perf_counter()
            sample = await _exchange(connections[which], targets[which], payloads[which], now, 10)
            counts["failed" if sample.error else "ok"] += 1
        for connection in connections:
            connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(client(user) for user in range(concurrency)))
    elapsed = time.perf_counter() - started
    return {"rps": counts["ok"] / elapsed, "failed": float(counts["failed"])}


def _summary(name: str, times: list[float], direct: list[float]) -> dict[str, float]:
    good = [t for t in times if t == t]
    base = [t for t in direct if t == t]
    return {
        "p50": statistics.median(good),
        "p99": percentile(good, 0.99),
        "added p50": statistics.median(good) - statistics.median(base),
        "added p99": percentile(good, 0.99) - percentile(base, 0.99),
        "failed": float(len(times) - len(good)),
    }


async def _run(ports: dict[str, list[int]], args: argparse.Namespace) -> None:
    checked = {
        name: [Target("127.0.0.1", port, headers=_HEADERS, expect=(CALL_MARKER,)) for port in p]
        for name, p in ports.items()
    }
    times = await _latency(checked, args.rounds)
    figures = {
        name: _summary(name, times[name], times["direct"]) for name in ("sqlite", "postgres")
    }
    for name in ("sqlite", "postgres"):
        figures[name] |= await load(checked[name], args.concurrency, args.seconds)
    postgres_label = f"postgres x{len(ports['postgres'])}"
    print(f"direct upstream: p50 {statistics.median(times['direct']):.2f} ms")
    for name, label in (("sqlite", "sqlite x1"), ("postgres", postgres_label)):
        f = figures[name]
        print(
            f"{label:12} p50 {f['p50']:.2f} ms (+{f['added p50']:.2f}) p99 {f['p99']:.2f} ms "
            f"(+{f['added p99']:.2f}) | {f['rps']:.0f} answers/s at {args.concurrency} "
            f"clients, {f['failed']:.0f} failed"
        )
    ratio = ratios(figures["postgres"], figures["sqlite"])
    shown = ", ".join(f"{key} {ratio[key]:.2f}" for key in ("added p50", "added p99", "rps"))
    print(f"{postgres_label} / sqlite x1: {shown}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--postgres", metavar="URL", help="default: a temporary server")
    args = parser.parse_args(argv)
    processes: list[subprocess.Popen[bytes]] = []
    server = None
    with tempfile.TemporaryDirectory(prefix="safeagents-store-bench-") as tmp:
        work = Path(tmp)
        try:
            url = args.postgres
            if url is None:
                sys.path.insert(0, str(REPO / "tests"))
                kit = importlib.import_module("postgres_kit")  # the tests' server
                binaries = kit.find_binaries()
                if binaries is None:
                    parser.error("no PostgreSQL binaries: give --postgres URL")
                server = kit.PostgresServer(binaries)
                server.start()
                url = server.database()
            command = [sys.executable, "-m", "bench.proxy.upstream", "--port", "0"]
            upstream = subprocess.Popen(command, stdout=subprocess.PIPE, cwd=REPO)
            processes.append(upstream)
            assert upstream.stdout is not None
            upstream_port = int(upstream.stdout.readline().split()[1])
            ports: dict[str, list[int]] = {"direct": [upstream_port], "postgres": []}
            process, port = _serve("sqlite", str(work / "s.db"), upstream_port, work)
            processes.append(process)
            ports["sqlite"] = [port]
            for index in range(args.instances):
                process, port = _serve(f"postgres{index}", url, upstream_port, work)
                processes.append(process)
                ports["postgres"].append(port)
            asyncio.run(_run(ports, args))
        finally:
            for process in processes:
                process.terminate()
                process.wait(15)
            if server is not None:
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
