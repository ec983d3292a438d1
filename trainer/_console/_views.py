"""What the pages show of a run and of an evaluation, read from the trainer's files."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from trainer._console._charts import BarChart, LineChart, bar_chart, line_chart
from trainer._console._runs import EvalReport, Run
from trainer._live import adapter_label, format_duration, format_number, format_percent
from trainer._metrics import MetricsTail, StepMetrics

__all__ = [
    "RunState",
    "eval_charts",
    "number",
    "percent",
    "read_run",
    "run_charts",
    "seconds",
]


@dataclass(frozen=True, slots=True)
class RunState:
    """A run's metrics log as read up to its last complete line."""

    run: Run
    steps: tuple[StepMetrics, ...]
    skipped: tuple[str, ...]
    position: str
    """Where a live stream picks up: ``{offset}:{line}`` after the last complete line."""
    updated: str

    @property
    def latest(self) -> StepMetrics | None:
        return self.steps[-1] if self.steps else None

    @property
    def adapter(self) -> str:
        return adapter_label(self.steps[-1]) if self.steps else "–"

    @property
    def published(self) -> list[str]:
        return [step.published for step in self.steps if step.published is not None]

    def live(self) -> dict[str, Any]:
        """The context of the part of the run page that follows the log."""
        return {
            "latest": self.latest,
            "adapter": self.adapter,
            "published": self.published,
            "skipped": [p.removeprefix(f"{self.run.directory}/") for p in self.skipped],
            "charts": run_charts(self.steps),
            "metrics_name": self.run.metrics.name,
        }


def read_run(run: Run) -> RunState:
    tail = MetricsTail(run.metrics)
    try:
        read = tail.read()
    except OSError as problem:
        reason = f"{run.metrics.name}: cannot be read ({problem.strerror or problem})"
        return RunState(run, (), (reason,), "0:0", "–")
    try:
        modified = run.metrics.stat().st_mtime
        updated = datetime.fromtimestamp(modified, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except OSError:
        updated = "–"
    return RunState(run, read.metrics, read.skipped, f"{tail.offset}:{tail.line}", updated)


def run_charts(steps: Sequence[StepMetrics]) -> list[LineChart]:
    """Reward, success and hack rate, tool calls, groups and samples, drops and the adapter
    version, each over the optimiser steps."""
    xs = [step.step for step in steps]

    def values(name: str) -> list[float | None]:
        return [getattr(step, name) for step in steps]

    return [
        line_chart(
            "reward", "Reward (mean)", xs, [("reward_mean", "reward", values("reward_mean"))]
        ),
        line_chart(
            "rates",
            "Success and hack rate",
            xs,
            [
                ("success_rate", "success", values("success_rate")),
                ("hack_rate", "hacked", values("hack_rate")),
            ],
            low=0.0,
            high=1.0,
            percent=True,
        ),
        line_chart(
            "tool-calls",
            "Tool calls per session",
            xs,
            [("tool_calls_mean", "tool calls (mean)", values("tool_calls_mean"))],
            low=0.0,
            digits=1,
        ),
        line_chart(
            "batch",
            "Groups and samples per step",
            xs,
            [("groups", "groups", values("groups")), ("samples", "samples", values("samples"))],
            low=0.0,
            digits=0,
        ),
        line_chart(
            "dropped",
            "Rows dropped per step",
            xs,
            [
                ("dropped_stale", "stale", values("dropped_stale")),
                ("dropped_oversize", "oversize", values("dropped_oversize")),
            ],
            low=0.0,
            digits=0,
        ),
        line_chart(
            "version",
            "Adapter version trained",
            xs,
            [("version", "version", values("version"))],
            low=0.0,
            digits=0,
        ),
    ]


def eval_charts(report: EvalReport) -> list[BarChart]:
    """Accuracy, tool calls, hack rate, tokens and time of each checkpoint, side by side."""
    names = [c.checkpoint for c in report.checkpoints]
    checkpoints = report.checkpoints
    return [
        bar_chart(
            "accuracy",
            "Accuracy",
            names,
            [
                ("pass_at_1", "pass@1", [c.pass_at_1 for c in checkpoints]),
                (
                    "mean_success",
                    f"mean over {report.rollouts}",
                    [c.mean_success for c in checkpoints],
                ),
            ],
            high=1.0,
        ),
        bar_chart(
            "tool-calls",
            "Tool calls per session",
            names,
            [("tool_calls_mean", "tool calls", [c.tool_calls_mean for c in checkpoints])],
            digits=1,
        ),
        bar_chart(
            "hack-rate",
            "Hack rate",
            names,
            [("hack_rate", "hacked", [c.hack_rate for c in checkpoints])],
            high=1.0,
            percent=True,
        ),
        bar_chart(
            "tokens",
            "Tokens per session",
            names,
            [("tokens_mean", "tokens", [c.tokens_mean for c in checkpoints])],
            digits=0,
        ),
        bar_chart(
            "seconds",
            "Seconds per session",
            names,
            [("session_seconds_mean", "seconds", [c.session_seconds_mean for c in checkpoints])],
            digits=1,
        ),
    ]


def _real(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def number(value: object, digits: int = 3) -> str:
    """A number for a table cell; a dash for a missing or non-numeric value."""
    return format_number(_real(value), digits)


def percent(value: object) -> str:
    return format_percent(_real(value))


def seconds(value: object) -> str:
    real = _real(value)
    return format_duration(real) if real is not None else "–"
