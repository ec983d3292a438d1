"""Latency against load, one PNG per system and one with all systems (matplotlib, Agg)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.proxy.aggregate import median, system_names, trial_values

__all__ = ["plot_latency"]

_COLOURS = {
    "direct": "#7f7f7f",
    "safeagents-off": "#2ca02c",
    "safeagents-packs": "#1f77b4",
    "safeagents-1000": "#9467bd",
    "litellm": "#d62728",
}


def _sweep_points(data: dict[str, Any], system: str) -> list[tuple[int, float, float, float]]:
    """(concurrency, rate, p50, p99) medians over trials."""
    points = []
    for concurrency in data["settings"]["concurrency"]:
        runs = trial_values(data, system, "sweep", str(concurrency))
        if runs:
            points.append(
                (
                    concurrency,
                    median(r["rate"] for r in runs),
                    median(r["latency"]["p50"] for r in runs),
                    median(r["latency"]["p99"] for r in runs),
                )
            )
    return points


def _probes(data: dict[str, Any], system: str) -> list[tuple[float, float, bool]]:
    return [
        (probe["rate"], probe["latency"]["p99"], probe["passed"])
        for run in trial_values(data, system, "max_rate")
        for probe in run["probes"]
    ]


def plot_latency(data: dict[str, Any], directory: Path) -> list[Path]:
    """Write the plots; return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for system in system_names(data):
        points = _sweep_points(data, system)
        if not points:
            continue
        figure, axes = plt.subplots(figsize=(6.4, 4.2), dpi=110)
        rates = [p[1] for p in points]
        axes.plot(rates, [p[2] for p in points], "o-", label="closed loop p50")
        axes.plot(rates, [p[3] for p in points], "s--", label="closed loop p99")
        for concurrency, rate, _, p99 in points:
            axes.annotate(
                f"c={concurrency}", (rate, p99), textcoords="offset points", xytext=(4, 4)
            )
        probes = _probes(data, system)
        if probes:
            passed = [(rate, p99) for rate, p99, ok in probes if ok]
            failed = [(rate, p99) for rate, p99, ok in probes if not ok]
            if passed:
                axes.scatter(
                    [x for x, _ in passed],
                    [y for _, y in passed],
                    marker="^",
                    c="green",
                    label="open loop p99, pass",
                )
            if failed:
                axes.scatter(
                    [x for x, _ in failed],
                    [y for _, y in failed],
                    marker="x",
                    c="red",
                    label="open loop p99, fail",
                )
        axes.axhline(50, color="grey", linewidth=0.8, linestyle=":")
        axes.set_yscale("log")
        axes.set_xlabel("requests per second")
        axes.set_ylabel("latency (ms)")
        axes.set_title(f"{data['systems'][system]}: latency vs load")
        axes.legend(fontsize="small")
        axes.grid(True, which="both", alpha=0.3)
        path = directory / f"latency-{system}.png"
        figure.tight_layout()
        figure.savefig(path)
        plt.close(figure)
        written.append(path)
    figure, axes = plt.subplots(figsize=(7.2, 4.6), dpi=110)
    for system in system_names(data):
        points = _sweep_points(data, system)
        if points:
            colour = _COLOURS.get(system)
            rates = [p[1] for p in points]
            axes.plot(rates, [p[2] for p in points], "o-", color=colour, label=f"{system} p50")
            axes.plot(
                rates, [p[3] for p in points], "s--", color=colour, alpha=0.6, label=f"{system} p99"
            )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("requests per second (closed loop, concurrency 1/4/16/64)")
    axes.set_ylabel("latency (ms)")
    axes.set_title("latency vs load, non-stream, 100 B tool-call arguments")
    axes.legend(fontsize="x-small", ncol=2)
    axes.grid(True, which="both", alpha=0.3)
    path = directory / "latency-all.png"
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    written.append(path)
    return written
