"""Write ``bench/RESULTS.md`` (and its plots) from the raw data of a run.

.venv/bin/python -m bench.proxy.report [bench/out/proxy/latest.json]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from bench.proxy.aggregate import added, median, pooled, system_names, trial_values
from bench.proxy.measure import LATENCY_SCENARIOS
from bench.proxy.plots import plot_latency
from bench.proxy.report_parts import goals_table, method_section, resource_sections

__all__ = ["write_report"]

REPO = Path(__file__).resolve().parents[2]


def ms(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def _latency_section(data: dict[str, Any]) -> list[str]:
    lines = [
        "## Latency at concurrency 1",
        "",
        "Pooled over all trials; *added* is the system's percentile minus direct's "
        "(a difference of percentiles). ms.",
        "",
    ]
    rows = []
    for scenario in LATENCY_SCENARIOS:
        for system in system_names(data):
            if not trial_values(data, system, "latency", scenario):
                continue
            own = pooled(data, system, "latency", scenario, "latency")
            extra = added(data, system, "latency", scenario)
            spread = ", ".join(ms(v) for v in own["trial_p50s"])
            plus = system != "direct"
            rows.append(
                [
                    scenario,
                    system,
                    ms(own["p50"]),
                    ms(own["p99"]),
                    ms(extra["p50"]) if plus else "",
                    ms(extra["p99"]) if plus else "",
                    f"{own['n']:.0f} / {own['errors']:.0f}",
                    spread,
                ]
            )
    header = ["scenario", "system", "p50", "p99", "added p50", "added p99", "n / errors"]
    return lines + _table([*header, "p50 per trial"], rows)


def _stream_section(data: dict[str, Any]) -> list[str]:
    lines = [
        "## Streaming: first byte, first token, first tool-call byte",
        "",
        "`stream-paced`: the upstream waits 5 ms before its first event and 0.5 ms between "
        "events (32 events). The first token is the first text delta; tool calls are held "
        "by safeagents until checked, so its first tool-call byte comes after the whole "
        "answer. p50 / p99 in ms, added over direct in brackets.",
        "",
    ]
    rows = []
    for scenario in ("stream-100B", "stream-10KB", "stream-paced"):
        for system in system_names(data):
            if not trial_values(data, system, "latency", scenario):
                continue
            cells = [scenario, system]
            for metric in ("ttfb", "ttft", "ttfc", "latency"):
                own = pooled(data, system, "latency", scenario, metric)
                cell = f"{ms(own['p50'])} / {ms(own['p99'])}"
                if system != "direct":
                    extra = added(data, system, "latency", scenario, metric)
                    cell += f" ({ms(extra['p50'])} / {ms(extra['p99'])})"
                cells.append(cell)
            rows.append(cells)
    header = ["scenario", "system", "first byte", "first token", "first tool-call byte", "total"]
    return lines + _table(header, rows)


def _load_section(data: dict[str, Any]) -> list[str]:
    lines = [
        "## Throughput and latency under load (non-stream, 100 B arguments)",
        "",
        "Closed loop: N clients back to back (median over trials of each trial's figure). "
        "Max rate: the highest open-loop rate with zero errors and p99 < 50 ms, latency "
        "timed from each request's intended send time (median over trials; min-max).",
        "",
    ]
    concurrency = data["settings"]["concurrency"]
    rows = []
    litellm_rate = median(r["rate"] for r in trial_values(data, "litellm", "max_rate"))
    for system in system_names(data):
        cells = [system]
        for c in concurrency:
            runs = trial_values(data, system, "sweep", str(c))
            rate = median(r["rate"] for r in runs)
            p50 = median(r["latency"]["p50"] for r in runs)
            p99 = median(r["latency"]["p99"] for r in runs)
            cells.append(f"{rate:.0f}/s, {ms(p50, 1)} / {ms(p99, 1)}")
        rates = [r["rate"] for r in trial_values(data, system, "max_rate")]
        if rates:
            cells.append(f"{median(rates):.0f} ({min(rates):.0f}-{max(rates):.0f})")
            cells.append(f"{median(rates) / litellm_rate:.1f}x" if litellm_rate > 0 else "n/a")
        else:
            cells += ["(not a proxy)", ""]
        rows.append(cells)
    header = ["system", *(f"c={c}: rate, p50 / p99 ms" for c in concurrency)]
    lines += _table([*header, "max rate (p99 < 50 ms)", "vs LiteLLM"], rows)
    lines += [
        "![latency vs load, all systems](plots/latency-all.png)",
        "",
        "Per system: " + ", ".join(f"[{s}](plots/latency-{s}.png)" for s in system_names(data)),
        "",
    ]
    cpu = [
        probe["loadgen_cpu"]
        for system in system_names(data)
        for run in trial_values(data, system, "max_rate")
        for probe in run["probes"]
    ]
    if cpu:
        lines += [
            f"The load generator used at most {max(cpu) * 100:.0f}% of its core during the "
            "open-loop probes (it shares core 1 with the upstream).",
            "",
        ]
    return lines


def _blocked_section(data: dict[str, Any]) -> list[str]:
    lines = [
        "## Blocked-call path",
        "",
        "The upstream answers with a call the bundled `test-file-deletion` rule rejects; "
        "safeagents withholds it and re-asks once (non-stream), the upstream then answers "
        "a benign call. Direct is one round trip of the blocked answer. Each request is a "
        "new session. ms.",
        "",
    ]
    rows = []
    for scenario in ("blocked-nonstream", "blocked-stream"):
        for system in system_names(data):
            if not trial_values(data, system, "blocked", scenario):
                continue
            own = pooled(data, system, "blocked", scenario, "latency")
            rows.append(
                [
                    scenario,
                    system,
                    ms(own["p50"]),
                    ms(own["p99"]),
                    f"{own['n']:.0f} / {own['errors']:.0f}",
                ]
            )
    return lines + _table(["scenario", "system", "p50", "p99", "n / errors"], rows)


def write_report(data: dict[str, Any], path: Path, *, quick: bool = False) -> None:
    plots = plot_latency(data, path.parent / "plots")
    meta = data["meta"]
    lines = [
        "# Proxy benchmark: safeagents vs direct vs LiteLLM",
        "",
        f"Generated by `{meta['command']}` on {meta['date']} in {meta['seconds']} s"
        + (" (**quick pass: one short trial, figures are rough**)" if quick else "")
        + ". Regenerate the text from the raw data with "
        "`.venv/bin/python -m bench.proxy.report bench/out/proxy/latest.json`.",
        "",
    ]
    lines += goals_table(data)
    lines += _latency_section(data)
    lines += _stream_section(data)
    lines += _load_section(data)
    lines += _blocked_section(data)
    lines += resource_sections(data)
    lines += method_section(data)
    analysis = Path(__file__).with_name("analysis.md")
    if analysis.exists():
        lines += [analysis.read_text().rstrip(), ""]
    path.write_text("\n".join(lines))
    del plots


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    source = Path(args[0]) if args else REPO / "bench" / "out" / "proxy" / "latest.json"
    target = Path(args[1]) if len(args) > 1 else REPO / "bench" / "RESULTS.md"
    data = json.loads(source.read_text())
    write_report(data, target, quick=data["settings"]["trials"] < 2)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
