"""Prometheus metrics of one proxy process, in the plain-text exposition format."""

from __future__ import annotations

import threading
from collections.abc import Iterable

__all__ = ["Metrics"]

_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
_HELP = {
    "safeagents_requests_total": ("counter", "Model requests answered, by dialect/kind/status."),
    "safeagents_tool_calls_total": ("counter", "Tool calls checked, by harness."),
    "safeagents_findings_total": ("counter", "Rule findings, by rule and action."),
    "safeagents_blocked_calls_total": ("counter", "Tool calls withheld from the harness."),
    "safeagents_reasks_total": ("counter", "Re-asks sent to the upstream."),
    "safeagents_upstream_errors_total": ("counter", "Upstream failures, by kind."),
    "safeagents_passthrough_total": ("counter", "Requests passed through untouched."),
    "safeagents_in_flight_requests": ("gauge", "Model requests being answered now."),
    "safeagents_request_seconds": ("histogram", "Time to answer a model request."),
}

Labels = tuple[tuple[str, str], ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{key}="{_escape(value)}"' for key, value in labels) + "}"


class Metrics:
    """Counters, one gauge and one histogram; thread-safe, per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, dict[Labels, float]] = {name: {} for name in _HELP}
        self._buckets: dict[Labels, list[int]] = {}
        self._sums: dict[Labels, float] = {}

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            series = self._values[name]
            series[key] = series.get(key, 0.0) + amount

    def observe(self, seconds: float, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            counts = self._buckets.setdefault(key, [0] * (len(_BUCKETS) + 1))
            for index, bound in enumerate(_BUCKETS):
                if seconds <= bound:
                    counts[index] += 1
            counts[-1] += 1
            self._sums[key] = self._sums.get(key, 0.0) + seconds

    def value(self, name: str, **labels: str) -> float:
        with self._lock:
            return self._values[name].get(tuple(sorted(labels.items())), 0.0)

    def render(self) -> str:
        lines: list[str] = []
        with self._lock:
            for name, (kind, text) in _HELP.items():
                lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
                if kind == "histogram":
                    lines.extend(self._histogram_lines(name))
                    continue
                series = self._values[name] or ({(): 0.0} if kind == "gauge" else {})
                lines.extend(f"{name}{_labels(k)} {_number(v)}" for k, v in sorted(series.items()))
        return "\n".join(lines) + "\n"

    def _histogram_lines(self, name: str) -> Iterable[str]:
        for key, counts in sorted(self._buckets.items()):
            for bound, count in zip((*map(str, _BUCKETS), "+Inf"), counts, strict=True):
                yield f"{name}_bucket{_labels((*key, ('le', bound)))} {count}"
            yield f"{name}_sum{_labels(key)} {_number(self._sums[key])}"
            yield f"{name}_count{_labels(key)} {counts[-1]}"


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)
