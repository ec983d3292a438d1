"""Paired A/B of checkouts' proxies on sessions they have not followed: a cold history cache.

A proxy process rebuilds a session's state from the conversation when it did not serve the
session's last turn (another worker or instance did, or it restarted). Each round sends one
streamed request with ``--history`` earlier turns in a new session to every proxy, in a new
random order, against the paced scripted upstream (first token after ``--first-token-ms``).
Reported: each proxy's p50 total time and time to first token, and the median paired
difference from the first checkout.

    .venv/bin/python -m bench.proxy.cold_history /work/base-checkout . --history 5
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.proxy.loadgen import Target, _connect, _exchange, request_bytes
from bench.proxy.paired import _HEADERS, Proxy, _start_proxy, _stop
from bench.proxy.payloads import Scenario, request_body
from bench.proxy.systems import REPO, pinned

__all__ = ["main"]

_WARMUP = 5


def _start_upstream(first_token_ms: float) -> tuple[subprocess.Popen[bytes], int]:
    command = [sys.executable, "-m", "bench.proxy.upstream", "--port", "0"]
    command += ["--first-token-delay-ms", str(first_token_ms), "--chunk-delay-ms", "0.5"]
    process = subprocess.Popen(
        pinned("1", command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=REPO
    )
    assert process.stdout is not None
    return process, int(process.stdout.readline().split()[1])


async def _run(proxies: list[Proxy], history: int, rounds: int) -> None:
    targets = {p.name: Target("127.0.0.1", p.port, headers=_HEADERS) for p in proxies}
    clients = {name: await _connect(target) for name, target in targets.items()}
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in targets}
    for index in range(_WARMUP + rounds):
        body = request_body(Scenario("100", paced=True), stream=True, user=index, history=history)
        order = list(targets)
        random.shuffle(order)
        for name in order:
            payload = request_bytes(targets[name], body, session=f"cold-{index}")
            sample = await _exchange(clients[name], targets[name], payload, time.perf_counter(), 60)
            if sample.error is not None:
                raise RuntimeError(f"{name}: {sample.error}")
            if index >= _WARMUP:
                first = sample.done if math.isnan(sample.first_token) else sample.first_token
                total = (sample.done - sample.sent) * 1000
                samples[name].append((total, (first - sample.sent) * 1000))
    base = proxies[0].name
    for name, values in samples.items():
        total = statistics.median(v[0] for v in values)
        first = statistics.median(v[1] for v in values)
        text = f"{name}: total p50 {total:.2f} ms, first token p50 {first:.2f} ms"
        if name != base:
            pairs = list(zip(samples[base], values, strict=True))
            text += f" | paired total {statistics.median(b[0] - a[0] for a, b in pairs):+.2f} ms"
            text += f", first token {statistics.median(b[1] - a[1] for a, b in pairs):+.2f} ms"
        print(text, flush=True)
    for client in clients.values():
        client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", type=Path, nargs="+", help="the base first, then others")
    parser.add_argument("--history", type=int, default=5, help="earlier turns per request")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--first-token-ms", type=float, default=20.0)
    args = parser.parse_args(argv)
    upstream, port = _start_upstream(args.first_token_ms)
    proxies: list[Proxy] = []
    try:
        with tempfile.TemporaryDirectory(prefix="safeagents-cold-") as tmp:
            for index, tree in enumerate(args.checkouts):
                name = chr(ord("A") + index)
                proxies.append(_start_proxy(name, tree.resolve(), port, Path(tmp)))
            asyncio.run(_run(proxies, args.history, args.rounds))
    finally:
        _stop(proxies, upstream)
    return 0


if __name__ == "__main__":
    sys.exit(main())
