"""Combining trials: pooled percentiles at concurrency 1, medians of everything else."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from typing import Any

from bench.proxy.stats import percentile

__all__ = [
    "added",
    "median",
    "pooled",
    "system_names",
    "trial_values",
]


def system_names(data: dict[str, Any]) -> list[str]:
    return list(data["systems"])


def trial_values(data: dict[str, Any], system: str, *path: str) -> list[Any]:
    """The value at ``path`` in each trial's result for ``system`` (trials lacking it skipped)."""
    values = []
    for trial in data["trials"]:
        node: Any = trial["systems"].get(system)
        for key in path:
            if not isinstance(node, dict) or key not in node:
                node = None
                break
            node = node[key]
        if node is not None:
            values.append(node)
    return values


def median(values: Iterable[float]) -> float:
    finite = [v for v in values if isinstance(v, (int, float)) and not math.isnan(v)]
    return statistics.median(finite) if finite else math.nan


def pooled(
    data: dict[str, Any], system: str, group: str, scenario: str, metric: str
) -> dict[str, Any]:
    """p50/p99 of ``metric`` over every request of every trial, and the request/error counts."""
    runs = trial_values(data, system, group, scenario)
    values = [v for run in runs for v in run["raw"][metric]]
    return {
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "n": float(len(values)),
        "errors": float(sum(run["errors"] for run in runs)),
        "trial_p50s": [percentile(run["raw"][metric], 50) for run in runs],
    }


def added(
    data: dict[str, Any], system: str, group: str, scenario: str, metric: str = "latency"
) -> dict[str, float]:
    """``system`` minus direct at p50 and p99 (a difference of percentiles)."""
    own = pooled(data, system, group, scenario, metric)
    base = pooled(data, "direct", group, scenario, metric)
    return {"p50": own["p50"] - base["p50"], "p99": own["p99"] - base["p99"]}
