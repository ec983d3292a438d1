"""What the run was made on (machine, versions, load), and the rule-engine scaling check."""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.proxy.interference import busiest_processes, foreign_cpu, snapshot
from bench.proxy.systems import REPO, litellm_version, pinned

__all__ = ["activity_after", "engine_check", "machine_info"]

_PACKAGES = ("safeagents", "starlette", "uvicorn", "httptools", "httpx", "anyio", "h11")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return 0.0


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _git_commit() -> str:
    result = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    commit = result.stdout.strip() or "unknown"
    return commit + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def machine_info(command: str) -> dict[str, Any]:
    return {
        "command": command,
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": round(_memory_gb(), 1),
        "kernel": platform.release(),
        "python": sys.version.split()[0],
        "packages": {name: _version(name) for name in _PACKAGES},
        "litellm": litellm_version(),
        "commit": _git_commit(),
        "load_before": os.getloadavg(),
        **_activity("before"),
    }


def _activity(when: str) -> dict[str, Any]:
    """Other work on the machine over one second: its share of a core, the busiest."""
    start = snapshot()
    busiest = busiest_processes(1.0)
    return {f"foreign_cpu_{when}": foreign_cpu(start, snapshot()), f"busiest_{when}": busiest}


def activity_after() -> dict[str, Any]:
    return {"load_after": os.getloadavg(), **_activity("after")}


def engine_check() -> dict[str, Any]:
    """``bench/check_bench.py --json`` on core 0: end-to-end check cost, 10 vs 1,000 rules."""
    result = subprocess.run(
        pinned("0", [sys.executable, str(REPO / "bench" / "check_bench.py"), "--json"]),
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        return {"error": (result.stderr or result.stdout)[-2000:]}
    rows: list[dict[str, Any]] = json.loads(lines[-1])
    ratios: dict[str, float] = {}
    for call in sorted({str(row["call"]) for row in rows}):
        cost = {
            row["engine"]: float(row["p50"])
            for row in rows
            if row["call"] == call and row["size"] == "10 KB"
        }
        if "10 synthetic" in cost and "1000 synthetic" in cost:
            ratios[call] = cost["1000 synthetic"] / cost["10 synthetic"]
    return {"rows": rows, "ratios_10kb": ratios}
