"""Sections of ``RESULTS.md``: the goals, resources (start, memory, workers, engine), method."""

from __future__ import annotations

import math
from typing import Any

from bench.proxy.aggregate import added, median, system_names, trial_values

__all__ = ["goals_table", "method_section", "resource_sections", "soak_growth"]

SYSTEM = "safeagents-packs"
FLAT_MB = 2.0
"""Most the RSS may grow over the second half of the soak and still count as flat."""


def _f(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "**missed**")


def soak_growth(soak: dict[str, Any]) -> float:
    """RSS at the end minus RSS half-way through the soak (MB)."""
    series = soak["series"]
    if len(series) < 3:
        return math.nan
    middle = series[len(series) // 2][1]
    return float(series[-1][1] - middle)


def goals_table(data: dict[str, Any]) -> list[str]:
    rows: list[list[str]] = []
    for scenario in ("nonstream-100B", "stream-100B"):
        if not trial_values(data, SYSTEM, "latency", scenario):
            continue
        extra = added(data, SYSTEM, "latency", scenario)
        ok = extra["p50"] <= 1.5 and extra["p99"] <= 5.0
        rows.append(
            [
                f"added latency, c=1, bundled packs, {scenario}",
                "p50 <= 1.5 ms, p99 <= 5 ms",
                f"p50 {_f(extra['p50'])} ms, p99 {_f(extra['p99'])} ms",
                _verdict(ok),
            ]
        )
    ours = median(r["rate"] for r in trial_values(data, SYSTEM, "max_rate"))
    theirs = median(r["rate"] for r in trial_values(data, "litellm", "max_rate"))
    ratio = ours / theirs if theirs > 0 else math.nan
    rows.append(
        [
            "max zero-error rate (p99 < 50 ms) vs LiteLLM, same core",
            ">= 10x",
            f"{_f(ours, 0)}/s vs {_f(theirs, 0)}/s = {_f(ratio, 1)}x",
            _verdict(None if math.isnan(ratio) else ratio >= 10),
        ]
    )
    if trial_values(data, SYSTEM, "latency", "stream-paced"):
        ttft = added(data, SYSTEM, "latency", "stream-paced", "ttft")
        rows.append(
            [
                "added time to first token (paced stream)",
                "<= 2 ms",
                f"p50 {_f(ttft['p50'])} ms, p99 {_f(ttft['p99'])} ms",
                _verdict(ttft["p50"] <= 2.0),
            ]
        )
    soak = data.get("soak", {}).get(SYSTEM)
    if soak:
        largest = soak["final"]["largest_mb"]
        peak = max(
            [m["peak_mb"] for m in trial_values(data, SYSTEM, "memory")]
            + [soak["final"]["peak_mb"]]
        )
        growth = soak_growth(soak)
        rows.append(
            [
                f"RSS per worker, flat over a {soak['requests']:,}-request soak",
                f"<= 120 MB, growth <= {FLAT_MB:.0f} MB over the second half",
                f"peak {_f(peak, 1)} MB, after soak {_f(largest, 1)} MB, growth {_f(growth, 1)} MB",
                _verdict(peak <= 120 and growth <= FLAT_MB),
            ]
        )
    ratios = data.get("engine", {}).get("ratios_10kb", {})
    if ratios:
        worst = max(ratios.values())
        rows.append(
            [
                "rule engine: 1,000 rules vs 10 rules, 10 KB arguments (check_bench.py)",
                "<= 2x",
                ", ".join(f"{call} {value:.2f}x" for call, value in ratios.items()),
                _verdict(worst <= 2.0),
            ]
        )
    lines = ["## Goals", "", "| goal | target | measured | |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def resource_sections(data: dict[str, Any]) -> list[str]:
    lines = ["## Cold start and memory", ""]
    lines += [
        "| system | cold start to first 200 (s, median) | RSS after the trial (MB) | "
        "peak RSS (MB) | processes |",
        "|---|---|---|---|---|",
    ]
    for system in system_names(data):
        if system == "direct":
            continue
        starts = [float(v) for v in trial_values(data, system, "cold_start")]
        memory = trial_values(data, system, "memory")
        start = f"{_f(median(starts))} ({_f(min(starts, default=math.nan))}-"
        start += f"{_f(max(starts, default=math.nan))})"
        rss = _f(median(m["rss_mb"] for m in memory), 1)
        peak = _f(max((m["peak_mb"] for m in memory), default=math.nan), 1)
        processes = memory[0]["processes"] if memory else "n/a"
        lines.append(f"| {system} | {start} | {rss} | {peak} | {processes} |")
    lines.append("")
    soaks = data.get("soak", {})
    if soaks:
        lines += [
            "### Soak (non-stream, concurrency 16; RSS of the whole process tree)",
            "",
            "| system | requests | errors | seconds | RSS start -> half -> end (MB) | "
            "growth over 2nd half |",
            "|---|---|---|---|---|---|",
        ]
        for system, soak in soaks.items():
            series = soak["series"]
            half = series[len(series) // 2][1]
            capped = " (capped by time)" if soak["capped"] else ""
            counts = f"{soak['requests']:,}{capped} | {soak['errors']} | {soak['seconds']}"
            lines.append(
                f"| {system} | {counts} | "
                f"{series[0][1]:.1f} -> {half:.1f} -> {series[-1][1]:.1f} | "
                f"{_f(soak_growth(soak), 1)} MB |"
            )
        lines.append("")
    workers = data.get("workers", {})
    if workers:
        lines += [
            "### Workers (safeagents, bundled packs; closed loop, concurrency 64)",
            "",
            "| variant | throughput (median, min-max) | p50 / p99 ms |",
            "|---|---|---|",
        ]
        for name, runs in workers.items():
            rates = [r["rate"] for r in runs]
            lines.append(
                f"| {name} | {median(rates):.0f}/s ({min(rates):.0f}-{max(rates):.0f}) | "
                f"{_f(median(r['latency']['p50'] for r in runs), 1)} / "
                f"{_f(median(r['latency']['p99'] for r in runs), 1)} |"
            )
        lines += [
            "",
            "On two cores the load generator and upstream share core 1 with the second "
            "worker, so the 2-worker figure understates what a second free core would give.",
            "",
        ]
    engine = data.get("engine", {})
    if engine.get("rows"):
        lines += [
            "### Rule engine (`bench/check_bench.py`, p50 µs per checked call, core 0)",
            "",
            "| call | size | " + " | ".join(_engines(engine)) + " |",
            "|---|---|" + "---|" * len(_engines(engine)),
        ]
        keys = sorted({(r["call"], r["size"]) for r in engine["rows"]}, key=_size_order)
        for call, size in keys:
            p50 = {
                r["engine"]: r["p50"]
                for r in engine["rows"]
                if (r["call"], r["size"]) == (call, size)
            }
            cells = [_f(p50[e], 0) if e in p50 else "-" for e in _engines(engine)]
            lines.append(f"| {call} | {size} | " + " | ".join(cells) + " |")
        lines.append("")
    elif engine.get("error"):
        lines += [
            "### Rule engine",
            "",
            "check_bench.py failed:",
            "",
            "```",
            engine["error"],
            "```",
            "",
        ]
    return lines


def _engines(engine: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(r["engine"] for r in engine["rows"]))


def _size_order(key: tuple[str, str]) -> tuple[str, int]:
    return key[0], {"100 B": 0, "10 KB": 1, "100 KB": 2}.get(key[1], 3)


def _loads(values: list[float] | None) -> str:
    return ", ".join(f"{v:.2f}" for v in values or [])


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _interference(data: dict[str, Any]) -> str:
    parts = []
    for system in system_names(data):
        shares = [_share(v) for v in trial_values(data, system, "foreign_cpu")]
        if shares:
            parts.append(f"{system} {' / '.join(shares)}")
    return "; ".join(parts) or "not recorded"


def method_section(data: dict[str, Any]) -> list[str]:
    meta, settings = data["meta"], data["settings"]
    packages = ", ".join(f"{k} {v}" for k, v in meta["packages"].items())
    labels = "; ".join(f"`{k}`: {v}" for k, v in data["systems"].items())
    lines = [
        "## Machine and method",
        "",
        f"- Machine: {meta['cpu']}, {meta['cores']} cores, {meta['memory_gb']} GB, "
        f"Linux {meta['kernel']}, Python {meta['python']}.",
        f"- Load average before the run: {_loads(meta.get('load_before'))}; after: "
        f"{_loads(meta.get('load_after'))}. Other work used "
        f"{_share(meta.get('foreign_cpu_before'))} of a core in the second before the run "
        f"(busiest: {'; '.join(meta.get('busiest_before', []))}) and "
        f"{_share(meta.get('foreign_cpu_after'))} in the second after it.",
        f"- Other work during each system's measurements (share of one core, per trial): "
        f"{_interference(data)}.",
        f"- Versions: {packages}; LiteLLM {meta['litellm'] or 'not installed'} "
        "(`litellm[proxy]` + httptools in `bench/.venvs/litellm`); commit "
        f"{meta['commit']}.",
        f"- Systems: {labels}. Same request bodies for all; 1 worker each unless stated.",
        "- Pinning (`taskset`): proxy on core 0; scripted upstream and load generator "
        "(this process) on core 1.",
        f"- Settings: {settings['trials']} trial(s), systems in a new random order each trial; "
        f"{settings['warmup']} s warm-up per system; {settings['latency_seconds']} s per "
        f"scenario at concurrency 1; {settings['sweep_seconds']} s per concurrency "
        f"{settings['concurrency']}; {settings['rate_steps']} open-loop probes of "
        f"{settings['rate_seconds']} s (after {settings['rate_warmup']} s warm-up each).",
        "- Requests: a pi-style first turn (system prompt, user message, 4 tools; about 3 KB); "
        "64 simulated users, one proxy session each. The upstream (raw asyncio, pre-serialised "
        "answers) answers with a text and one `bash` call whose arguments are 100 B or 10 KB; "
        "streams are 32 SSE events.",
        "- LiteLLM: `litellm --config` with the models mapped to the upstream, "
        "`LITELLM_LOCAL_MODEL_COST_MAP=True`, `LITELLM_LOG=ERROR`, a master key, "
        "`num_retries: 0`, no callbacks, no database.",
        "- safeagents rules off: a pack with only `pack.yaml` (`--rules DIR`); calls are still "
        "parsed and analysed, only no rule applies. The store is SQLite in a temp directory.",
        "",
    ]
    return lines
