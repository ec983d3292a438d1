"""StepMetrics for the metrics, live view and plot tests."""

from __future__ import annotations

from typing import Any

from trainer._metrics import StepMetrics


def make_step(step: int, *, harness: str = "toy", **overrides: Any) -> StepMetrics:
    """A plausible step whose reward rises and tool calls fall with ``step``."""
    values: dict[str, Any] = {
        "step": step,
        "harness": harness,
        "version": (step - 1) // 2,
        "groups": 4,
        "rollouts": 32,
        "samples": 28 + step,
        "unscored": 1,
        "reward_mean": round(0.1 * step, 6),
        "success_rate": min(1.0, 0.125 * step),
        "hack_rate": 0.125,
        "tool_calls_mean": 9.0 - 0.5 * step,
        "dropped_stale": step % 3,
        "dropped_oversize": 1,
        "tokens": 1000 * step,
        "tokens_per_s": 250.0 * step,
        "loss": 0.5 / step,
        "step_seconds": 4.0,
        "elapsed_seconds": 4.0 * step,
        "published": None,
    }
    values.update(overrides)
    return StepMetrics(**values)
