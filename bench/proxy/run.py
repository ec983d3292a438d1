"""Run the whole proxy benchmark and write ``bench/RESULTS.md`` with its plots.

    .venv/bin/python -m bench.proxy.run --quick   # a fast pass: one short trial
    .venv/bin/python -m bench.proxy.run           # the full run (3 trials, about 13 minutes)

The proxies run on core 0, the scripted upstream and this process (the load generator) on
core 1. Systems are measured one at a time, in a new random order each trial.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.engine_bench import build_rules
from bench.proxy import measure
from bench.proxy.interference import foreign_cpu, snapshot
from bench.proxy.loadgen import Target
from bench.proxy.machine import activity_after, engine_check, machine_info
from bench.proxy.report import write_report
from bench.proxy.systems import (
    REPO,
    Running,
    SystemSpec,
    ensure_litellm,
    pinned,
    start_system,
    tree_memory,
)

OUT = REPO / "bench" / "out" / "proxy"


def _systems(work: Path, with_litellm: bool) -> list[SystemSpec]:
    empty = work / "rules-off"
    empty.mkdir()
    (empty / "pack.yaml").write_text("name: rules-off\ndescription: no rules\n")
    synthetic = work / "synthetic-1000"
    synthetic.mkdir()
    build_rules(synthetic, 1_000)
    bundled = str(REPO / "rules")
    systems = [
        SystemSpec("direct", "direct", label="direct to upstream"),
        SystemSpec("safeagents-off", "safeagents", (str(empty),), label="safeagents, no rules"),
        SystemSpec("safeagents-packs", "safeagents", label="safeagents, bundled packs"),
        SystemSpec(
            "safeagents-1000",
            "safeagents",
            (bundled, str(synthetic)),
            label="safeagents, bundled packs + 1,000 synthetic rules",
        ),
    ]
    if with_litellm:
        systems.append(SystemSpec("litellm", "litellm", label="LiteLLM proxy"))
    return systems


def _start_upstream(work: Path) -> tuple[subprocess.Popen[bytes], int]:
    command = [sys.executable, "-m", "bench.proxy.upstream", "--port", "0"]
    command += ["--first-token-delay-ms", "5", "--chunk-delay-ms", "0.5"]
    process = subprocess.Popen(
        pinned("1", command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=REPO
    )
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    if not line.startswith("ready "):
        raise RuntimeError(f"upstream did not start: {line!r}")
    return process, int(line.split()[1])


def _target(running: Running) -> Target:
    return Target("127.0.0.1", running.port, headers=running.spec.headers)


async def _measure_system(running: Running, settings: measure.Settings) -> dict[str, Any]:
    spec, target = running.spec, _target(running)
    print(f"  {spec.name}: cold start {running.cold_start:.2f} s", flush=True)
    await measure.warm_up(target, settings.warmup)
    result: dict[str, Any] = {"cold_start": running.cold_start}
    result["latency"] = await measure.latency_at_one(target, settings)
    result["sweep"] = await measure.sweep(target, settings)
    if spec.name in ("direct", "safeagents-packs"):
        enforcing = spec.kind == "safeagents"
        result["blocked"] = await measure.blocked_path(target, settings, enforcing=enforcing)
    if spec.kind != "direct":
        top = str(max(settings.concurrency))
        capacity = result["sweep"][top]["rate"]
        result["max_rate"] = await measure.max_rate(target, settings, capacity)
        assert running.process is not None
        result["memory"] = tree_memory(running.process.pid)
        print(
            f"  {spec.name}: max rate {result['max_rate']['rate']:.0f}/s, "
            f"RSS {result['memory']['rss_mb']:.0f} MB",
            flush=True,
        )
    return result


def _run_trials(
    systems: list[SystemSpec], settings: measure.Settings, upstream_port: int, work: Path
) -> list[dict[str, Any]]:
    trials: list[dict[str, Any]] = []
    rng = random.Random()
    for trial in range(settings.trials):
        order = systems[:]
        rng.shuffle(order)
        print(f"trial {trial + 1}/{settings.trials}: {[s.name for s in order]}", flush=True)
        results: dict[str, Any] = {}
        for spec in order:
            before = snapshot()
            running = start_system(spec, upstream_port, work)
            try:
                results[spec.name] = asyncio.run(_measure_system(running, settings))
            finally:
                running.stop()
            results[spec.name]["foreign_cpu"] = foreign_cpu(before, snapshot())
            time.sleep(0.5)
        trials.append({"trial": trial, "order": [s.name for s in order], "systems": results})
    return trials


def _soaks(
    systems: list[SystemSpec], settings: measure.Settings, upstream_port: int, work: Path
) -> dict[str, Any]:
    soaks: dict[str, Any] = {}
    for spec in systems:
        if spec.name not in ("safeagents-packs", "litellm"):
            continue
        print(f"soak: {spec.name}", flush=True)
        running = start_system(spec, upstream_port, work)
        try:
            assert running.process is not None
            target = _target(running)
            asyncio.run(measure.warm_up(target, 1.0))
            soaks[spec.name] = asyncio.run(
                measure.soak(
                    target,
                    running.process.pid,
                    settings.soak_requests,
                    settings.soak_seconds_cap,
                )
            )
        finally:
            running.stop()
    return soaks


def _workers(settings: measure.Settings, upstream_port: int, work: Path) -> dict[str, Any]:
    """safeagents (bundled packs) with 1 worker on core 0 and 2 workers on cores 0-1."""
    variants = {
        "1 worker, core 0": SystemSpec("workers-1", "safeagents", workers=1, cores="0"),
        "2 workers, core 0": SystemSpec("workers-2-one-core", "safeagents", workers=2, cores="0"),
        "2 workers, cores 0-1": SystemSpec("workers-2", "safeagents", workers=2, cores="0,1"),
    }
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    for trial in range(settings.trials):
        order = list(variants.items())
        random.shuffle(order)
        for name, spec in order:
            print(f"workers trial {trial + 1}: {name}", flush=True)
            running = start_system(spec, upstream_port, work)
            try:
                target = _target(running)
                asyncio.run(measure.warm_up(target, 1.0))
                results[name].append(
                    asyncio.run(measure.throughput(target, settings.workers_seconds))
                )
            finally:
                running.stop()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="safeagents proxy benchmark")
    parser.add_argument("--quick", action="store_true", help="one short trial (a smoke pass)")
    parser.add_argument("--trials", type=int, help="override the number of trials")
    parser.add_argument("--no-litellm", action="store_true", help="skip LiteLLM")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="PART",
        help="skip a part: soak, workers, engine",
    )
    parser.add_argument(
        "--results",
        type=Path,
        help="where to write the report (default bench/RESULTS.md; quick: bench/out/proxy/)",
    )
    args = parser.parse_args(argv)
    settings = measure.QUICK if args.quick else measure.Settings()
    if args.trials:
        settings = measure.Settings(**{**settings.to_json(), "trials": args.trials})
    OUT.mkdir(parents=True, exist_ok=True)
    if not args.no_litellm:
        ensure_litellm(OUT / "litellm-install.log")
    if (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {1})
    command = shlex.join([".venv/bin/python", "-m", "bench.proxy.run", *(argv or sys.argv[1:])])
    started = time.time()
    info = machine_info(command)
    with tempfile.TemporaryDirectory(prefix="safeagents-bench-") as tmp:
        work = Path(tmp)
        systems = _systems(work, not args.no_litellm)
        upstream, upstream_port = _start_upstream(work)
        try:
            data: dict[str, Any] = {"meta": info, "settings": settings.to_json()}
            data["systems"] = {s.name: s.label for s in systems}
            data["trials"] = _run_trials(systems, settings, upstream_port, work)
            if "soak" not in args.skip:
                data["soak"] = _soaks(systems, settings, upstream_port, work)
            if "workers" not in args.skip:
                data["workers"] = _workers(settings, upstream_port, work)
        finally:
            upstream.terminate()
            upstream.wait(5)
    if "engine" not in args.skip:
        print("engine: bench/check_bench.py", flush=True)
        data["engine"] = engine_check()
    data["meta"]["seconds"] = round(time.time() - started, 1)
    data["meta"].update(activity_after())
    stamp = time.strftime("%Y%m%d-%H%M%S")
    raw = OUT / f"results-{stamp}.json"
    raw.write_text(json.dumps(data))
    (OUT / ("latest-quick.json" if args.quick else "latest.json")).write_text(json.dumps(data))
    default = OUT / "RESULTS-quick.md" if args.quick else REPO / "bench" / "RESULTS.md"
    results: Path = args.results or default
    write_report(data, results, quick=args.quick)
    print(f"wrote {results} (raw data: {raw.relative_to(REPO)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
