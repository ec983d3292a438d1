"""The measurements run against one started system; each returns plain JSON-able data."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from bench.proxy.loadgen import Target, closed_loop, open_loop
from bench.proxy.payloads import CALL_MARKER, REASK_MARKER, Scenario, request_body
from bench.proxy.stats import Sample, summarise
from bench.proxy.systems import tree_memory

__all__ = [
    "LATENCY_SCENARIOS",
    "Settings",
    "blocked_path",
    "bodies_for",
    "latency_at_one",
    "max_rate",
    "soak",
    "sweep",
    "throughput",
    "warm_up",
]

USERS = 64
P99_LIMIT_MS = 50.0
HISTORY_TURNS = 25
"""Earlier turns in the long-context scenario (a request of about 100 KB)."""
# name -> (scenario, stream, earlier turns in the conversation)
LATENCY_SCENARIOS: dict[str, tuple[Scenario, bool, int]] = {
    "nonstream-100B": (Scenario("100"), False, 0),
    "nonstream-10KB": (Scenario("10k"), False, 0),
    "nonstream-100KB-context": (Scenario("100"), False, HISTORY_TURNS),
    "stream-100B": (Scenario("100"), True, 0),
    "stream-10KB": (Scenario("10k"), True, 0),
    "stream-paced": (Scenario("100", paced=True), True, 0),
}
BLOCKED_SCENARIOS: dict[str, tuple[Scenario, bool, int]] = {
    "blocked-nonstream": (Scenario("100", blocked=True), False, 0),
    "blocked-stream": (Scenario("100", blocked=True), True, 0),
}
LOAD_SCENARIO = LATENCY_SCENARIOS["nonstream-100B"]


@dataclass(frozen=True, slots=True)
class Settings:
    trials: int = 3
    warmup: float = 2.0
    latency_seconds: float = 1.5
    sweep_seconds: float = 2.0
    concurrency: tuple[int, ...] = (1, 4, 16, 64)
    rate_seconds: float = 2.0
    rate_warmup: float = 0.5
    rate_steps: int = 6
    soak_requests: int = 20_000
    soak_seconds_cap: float = 45.0
    workers_seconds: float = 3.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


QUICK = Settings(
    trials=1,
    warmup=1.0,
    latency_seconds=0.7,
    sweep_seconds=0.7,
    rate_seconds=0.8,
    rate_warmup=0.3,
    rate_steps=4,
    soak_requests=2_000,
    soak_seconds_cap=15.0,
    workers_seconds=1.0,
)


def bodies_for(scenario: Scenario, stream: bool, history: int = 0) -> list[bytes]:
    """One body per simulated user: each user is its own proxy session."""
    return [
        request_body(scenario, stream=stream, user=user, history=history) for user in range(USERS)
    ]


def _raw(samples: Sequence[Sample]) -> dict[str, list[float]]:
    good = [s for s in samples if s.error is None]
    return {
        name: [round(getattr(s, name) * 1000, 4) for s in good]
        for name in ("latency", "ttfb", "ttft", "ttfc")
    }


async def _timed(run: Any) -> tuple[list[Sample], float]:
    cpu, wall = time.process_time(), time.perf_counter()
    samples: list[Sample] = await run
    return samples, (time.process_time() - cpu) / max(1e-9, time.perf_counter() - wall)


def _result(samples: Sequence[Sample], loadgen_cpu: float, raw: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = summarise(samples).to_json()
    result["loadgen_cpu"] = round(loadgen_cpu, 3)
    if raw:
        result["raw"] = _raw(samples)
    return result


async def warm_up(target: Target, seconds: float) -> None:
    """Every scenario a few times, then the load scenario at concurrency 4."""
    for scenario, stream, history in (*LATENCY_SCENARIOS.values(), *BLOCKED_SCENARIOS.values()):
        bodies = bodies_for(scenario, stream, history)
        await closed_loop(target, bodies, concurrency=1, duration=0.05)
    await closed_loop(target, bodies_for(*LOAD_SCENARIO), concurrency=4, duration=seconds)


async def latency_at_one(target: Target, settings: Settings) -> dict[str, Any]:
    """Concurrency 1, each scenario: latency, TTFB, first token, first tool-call byte."""
    results: dict[str, Any] = {}
    checked = replace(target, expect=(CALL_MARKER,))
    for name, (scenario, stream, history) in LATENCY_SCENARIOS.items():
        bodies = bodies_for(scenario, stream, history)
        run = closed_loop(checked, bodies, concurrency=1, duration=settings.latency_seconds)
        samples, cpu = await _timed(run)
        results[name] = _result(samples, cpu, raw=True)
    return results


async def blocked_path(target: Target, settings: Settings, *, enforcing: bool) -> dict[str, Any]:
    """A blocked call and its one re-ask round trip, each request in a fresh session."""
    results: dict[str, Any] = {}
    expect = (CALL_MARKER, REASK_MARKER) if enforcing else (CALL_MARKER,)
    checked = replace(target, expect=expect, unique_session=True)
    for name, (scenario, stream, history) in BLOCKED_SCENARIOS.items():
        bodies = bodies_for(scenario, stream, history)
        run = closed_loop(checked, bodies, concurrency=1, duration=settings.latency_seconds)
        samples, cpu = await _timed(run)
        results[name] = _result(samples, cpu, raw=True)
    return results


async def sweep(target: Target, settings: Settings) -> dict[str, Any]:
    """Closed loop at each concurrency on the load scenario (non-stream, 100 B arguments)."""
    results: dict[str, Any] = {}
    bodies = bodies_for(*LOAD_SCENARIO)
    checked = replace(target, expect=(CALL_MARKER,))
    for concurrency in settings.concurrency:
        run = closed_loop(
            checked, bodies, concurrency=concurrency, duration=settings.sweep_seconds, warmup=0.2
        )
        samples, cpu = await _timed(run)
        results[str(concurrency)] = _result(samples, cpu)
        await asyncio.sleep(0.2)
    return results


async def max_rate(target: Target, settings: Settings, capacity: float) -> dict[str, Any]:
    """Highest open-loop rate with no error and p99 < 50 ms, by bisection below 1.1x
    ``capacity`` (the closed-loop throughput at the highest concurrency), from 0.75x."""
    bodies = bodies_for(*LOAD_SCENARIO)
    checked = replace(target, expect=(CALL_MARKER,))
    low, high = 0.0, max(capacity, 1.0) * 1.1
    rate = max(capacity, 1.0) * 0.75
    probes: list[dict[str, Any]] = []
    for _ in range(settings.rate_steps):
        run = open_loop(
            checked,
            bodies,
            rate=rate,
            duration=settings.rate_seconds,
            warmup=settings.rate_warmup,
        )
        samples, cpu = await _timed(run)
        result = _result(samples, cpu)
        passed = result["errors"] == 0 and result["latency"]["p99"] < P99_LIMIT_MS
        probes.append({"rate": round(rate, 1), "passed": passed, **result})
        low, high = (rate, high) if passed else (low, rate)
        rate = (low + high) / 2
        await asyncio.sleep(1.0)  # let a saturated server drain its queue
    return {"rate": round(low, 1), "probes": probes}


async def throughput(target: Target, seconds: float, concurrency: int = 64) -> dict[str, Any]:
    bodies = bodies_for(*LOAD_SCENARIO)
    checked = replace(target, expect=(CALL_MARKER,))
    run = closed_loop(checked, bodies, concurrency=concurrency, duration=seconds, warmup=0.3)
    samples, cpu = await _timed(run)
    return _result(samples, cpu)


async def soak(
    target: Target, pid: int, requests: int, seconds_cap: float, points: int = 20
) -> dict[str, Any]:
    """``requests`` requests at concurrency 16 (or as many as fit in ``seconds_cap``), with the
    server's RSS read after each 1/``points`` of them."""
    bodies = bodies_for(*LOAD_SCENARIO)
    checked = replace(target, expect=(CALL_MARKER,))
    series = [[0, round(tree_memory(pid)["rss_mb"], 2)]]
    done = errors = 0
    started = time.perf_counter()
    per_point = max(1, requests // points)
    while done < requests and time.perf_counter() - started < seconds_cap:
        samples = await closed_loop(
            checked, bodies, concurrency=16, duration=seconds_cap, max_requests=per_point
        )
        done += len(samples)
        errors += sum(1 for s in samples if s.error is not None)
        series.append([done, round(tree_memory(pid)["rss_mb"], 2)])
    memory = tree_memory(pid)
    return {
        "requests": done,
        "errors": errors,
        "seconds": round(time.perf_counter() - started, 2),
        "series": series,
        "final": memory,
        "capped": done < requests,
    }
