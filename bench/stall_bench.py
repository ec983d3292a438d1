"""One big tool call must not stall everyone: small requests' latency while big calls are checked.

Starts a fast scripted upstream (raw asyncio, its own process) and, for each system, a
``safeagents serve`` (bundled packs, one worker) run from a checkout: ``main`` (``--main``, the
code before the change) and ``this`` (this checkout). One client sends small non-stream
requests one at a time, one every ``--interval-ms`` (a ``bash`` call of 100 B: checked
inline), so a request in flight during a stall waits it out; another sends big tool calls one
after another, ``--big`` of each size: ``echo x; `` repeated to 1, 4 and 8 MB, then ``ls``
(benign; costly for the shell analyser). Prints, per phase, the small requests' p50 / p99 /
max and the big calls' own time, and the ratios this / main of the same run. Proxy on core 0,
upstream and clients on core 1.

    .venv/bin/python bench/stall_bench.py [--main /work/main] [--big 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.proxy.payloads import Scenario, request_body  # noqa: E402

SIZES = {"1 MB": 1_000_000, "4 MB": 4_000_000, "8 MB": 8_000_000}
_MODEL = re.compile(rb'"model"\s*:\s*"([^"]*)"')
_LENGTH = re.compile(rb"\r\ncontent-length\s*:\s*(\d+)", re.IGNORECASE)


# --- the upstream ---------------------------------------------------------------------------


def _answer(command: str) -> bytes:
    call = {
        "id": "call_bench0",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    message = {"role": "assistant", "content": "Running it.", "tool_calls": [call]}
    body = json.dumps(
        {
            "id": "chatcmpl-stall",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()
    head = (
        f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def big_command(size: int) -> str:
    return "echo x; " * (size // 8) + "ls"


async def _upstream(port: int) -> None:
    answers: dict[bytes, bytes] = {}

    def answer(model: bytes) -> bytes:
        if model not in answers:
            size = int(model[len(b"stall-") :]) if model.startswith(b"stall-") else 0
            answers[model] = _answer(big_command(size) if size else "ls -la")
        return answers[model]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = _LENGTH.search(head)
                body = await reader.readexactly(int(length.group(1))) if length else b""
                if head.startswith(b"GET "):
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                else:
                    found = _MODEL.search(body)
                    writer.write(answer(found.group(1) if found else b""))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, limit=1 << 20)
    async with server:
        await server.serve_forever()


# --- systems --------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _pinned(core: str, command: list[str]) -> list[str]:
    if shutil.which("taskset") is None or (os.cpu_count() or 1) < 2:
        return command
    return ["taskset", "-c", core, *command]


def _start_proxy(checkout: Path, upstream: int, work: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    command = [sys.executable, "-m", "safeagents.cli", "serve"]
    command += ["--upstream", f"http://127.0.0.1:{upstream}", "--port", str(port)]
    command += ["--store", str(work / f"{checkout.name}-{port}.db"), "--log-level", "warning"]
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONUNBUFFERED": "1"}
    log = (work / f"{checkout.name}.log").open("ab")
    process = subprocess.Popen(
        _pinned("0", command), cwd=checkout, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    body = request_body(Scenario("100"), stream=False, user=999_999)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the proxy of {checkout} exited: see {work}")
        try:
            response = httpx.post(
                f"http://127.0.0.1:{port}/v1/chat/completions",
                content=body,
                headers={"content-type": "application/json"},
                timeout=5,
            )
            if response.status_code == 200:
                return process, port
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"the proxy of {checkout} did not answer")


# --- load -----------------------------------------------------------------------------------


@dataclass
class Phase:
    name: str
    start: float
    end: float = 0.0
    big_seconds: list[float] = field(default_factory=list)


@dataclass
class Measured:
    phases: list[Phase]
    small: list[tuple[float, float]]
    """(scheduled at, latency) of every small request."""
    errors: int = 0

    def latencies(self, phase: Phase) -> list[float]:
        return [lat for at, lat in self.small if phase.start <= at < phase.end]


async def _measure(port: int, args: argparse.Namespace) -> Measured:
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    headers = {"content-type": "application/json"}
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
    small_client = httpx.AsyncClient(timeout=120, limits=limits)
    big_client = httpx.AsyncClient(timeout=120)
    measured = Measured([], [])
    bodies = [request_body(Scenario("100"), stream=False, user=n) for n in range(64)]
    running = True

    async def small_stream() -> None:
        interval = args.interval_ms / 1000
        index = 0
        while running:
            began = time.perf_counter()
            try:
                body = bodies[index % 64]
                response = await small_client.post(url, content=body, headers=headers)
                ok = response.status_code == 200
            except httpx.HTTPError:
                ok = False
            measured.errors += not ok
            measured.small.append((began, time.perf_counter() - began))
            index += 1
            await asyncio.sleep(max(0.0, began + interval - time.perf_counter()))

    stream = asyncio.create_task(small_stream())
    await asyncio.sleep(1.0)  # warm-up, not reported
    baseline = Phase("small only", time.perf_counter())
    await asyncio.sleep(args.baseline)
    baseline.end = time.perf_counter()
    measured.phases.append(baseline)
    for label, size in SIZES.items():
        phase = Phase(f"+ {label} calls", time.perf_counter())
        for n in range(args.big):
            body = json.dumps(
                {
                    "model": f"stall-{size}",
                    "messages": [{"role": "user", "content": f"big call {label} #{n}"}],
                    "tools": json.loads(bodies[0])["tools"],
                }
            ).encode()
            began = time.perf_counter()
            response = await big_client.post(url, content=body, headers=headers)
            phase.big_seconds.append(time.perf_counter() - began)
            if response.status_code != 200:
                measured.errors += 1
        await asyncio.sleep(0.2)  # let the requests it delayed finish inside the phase
        phase.end = time.perf_counter()
        measured.phases.append(phase)
    running = False
    await stream
    await small_client.aclose()
    await big_client.aclose()
    return measured


# --- report ---------------------------------------------------------------------------------


def _ms(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _report(results: dict[str, Measured]) -> None:
    names = list(results)
    print()
    header = "| phase | " + " | ".join(
        f"{n} p50 / p99 / max (ms) | {n} big call (s)" for n in names
    )
    if len(names) == 2:
        header += " | max ratio | p99 ratio"
    print(header + " |")
    print("|" + "---|" * (1 + 2 * len(names) + (2 if len(names) == 2 else 0)))
    for index, phase in enumerate(results[names[0]].phases):
        cells = [phase.name]
        stats = []
        for name in names:
            measured = results[name]
            own = measured.phases[index]
            lat = measured.latencies(own)
            p50, p99, top = _ms(lat, 0.5), _ms(lat, 0.99), _ms(lat, 1.0)
            stats.append((p99, top))
            cells.append(f"{p50:.1f} / {p99:.1f} / {top:.0f} (n={len(lat)})")
            big = statistics.median(own.big_seconds) if own.big_seconds else None
            cells.append(f"{big:.2f}" if big is not None else "-")
        if len(names) == 2:
            (p99a, maxa), (p99b, maxb) = stats
            cells.append(f"{maxb / maxa:.3f}x")
            cells.append(f"{p99b / p99a:.3f}x")
        print("| " + " | ".join(cells) + " |")
    for name, measured in results.items():
        print(f"{name}: {len(measured.small)} small requests, {measured.errors} errors")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--main", type=Path, default=Path("/work/main"), help="checkout before")
    parser.add_argument("--only-this", action="store_true", help="skip the --main checkout")
    parser.add_argument("--big", type=int, default=2, help="big calls of each size")
    parser.add_argument("--interval-ms", type=float, default=20.0)
    parser.add_argument("--baseline", type=float, default=3.0, help="seconds of small only")
    parser.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_upstream:
        asyncio.run(_upstream(args.serve_upstream))
        return
    if (os.cpu_count() or 1) >= 2 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {1})
    checkouts = {} if args.only_this else {"main": args.main.resolve()}
    checkouts["this"] = REPO
    upstream_port = _free_port()
    upstream = subprocess.Popen(
        [sys.executable, __file__, "--serve-upstream", str(upstream_port)], cwd=REPO
    )
    results: dict[str, Measured] = {}
    try:
        time.sleep(0.5)
        with tempfile.TemporaryDirectory(prefix="stall-bench-") as directory:
            for name, checkout in checkouts.items():
                process, port = _start_proxy(checkout, upstream_port, Path(directory))
                try:
                    results[name] = asyncio.run(_measure(port, args))
                finally:
                    process.terminate()
                    process.wait(15)
                print(f"{name} ({checkout}) done", flush=True)
    finally:
        upstream.terminate()
        upstream.wait(5)
    _report(results)


if __name__ == "__main__":
    main()
