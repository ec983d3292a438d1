"""The PNG of a training run: reward and success rate, and mean tool calls, per step.

matplotlib is imported when a plot is drawn (it comes with the ``train`` extra), and the
figure is rendered by the Agg canvas directly, without pyplot's global state.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from trainer._metrics import StepMetrics

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["curves_figure", "plot_curves"]

_NAN = float("nan")


def plot_curves(metrics: Sequence[StepMetrics], path: Path) -> Path:
    """Write the run's curves to ``path`` (PNG) and return it."""
    figure = curves_figure(metrics)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    return path


def curves_figure(metrics: Sequence[StepMetrics]) -> Figure:
    """Two panels sharing the step axis: reward mean (success rate dashed) above, mean tool
    calls below; a dotted line, labelled, where an adapter was published; a colour per harness.
    """
    if not metrics:
        raise ValueError("no metrics to plot: the run recorded no step")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(8.0, 6.4), dpi=110)
    FigureCanvasAgg(figure)
    reward_axes, calls_axes = figure.subplots(2, 1, sharex=True)
    by_harness = _by_harness(metrics)
    for index, (harness, steps) in enumerate(by_harness.items()):
        colour = f"C{index}"
        prefix = f"{harness}: " if len(by_harness) > 1 else ""
        xs = [m.step for m in steps]
        rewards = [_gap(m.reward_mean) for m in steps]
        successes = [_gap(m.success_rate) for m in steps]
        calls = [m.tool_calls_mean for m in steps]
        style = {"color": colour, "markersize": 3}
        reward_axes.plot(xs, rewards, "o-", label=f"{prefix}reward mean", **style)
        reward_axes.plot(xs, successes, "--", alpha=0.7, label=f"{prefix}success rate", **style)
        calls_axes.plot(xs, calls, "o-", label=f"{prefix}mean tool calls", **style)
        _mark_published(reward_axes, calls_axes, steps, colour)
    reward_axes.set_ylabel("reward / success rate")
    reward_axes.set_title(_title(by_harness))
    calls_axes.set_ylabel("tool calls per session")
    calls_axes.set_xlabel("optimiser step")
    calls_axes.set_ylim(bottom=0)
    calls_axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    for axes in (reward_axes, calls_axes):
        axes.grid(True, alpha=0.3)
        axes.legend(fontsize="small", loc="best")
    figure.tight_layout()
    return figure


def _by_harness(metrics: Sequence[StepMetrics]) -> dict[str, list[StepMetrics]]:
    grouped: dict[str, list[StepMetrics]] = {}
    for step in metrics:
        grouped.setdefault(step.harness, []).append(step)
    return {harness: sorted(steps, key=lambda m: m.step) for harness, steps in grouped.items()}


def _gap(value: float | None) -> float:
    """``None`` as NaN, which matplotlib leaves out of the line."""
    return _NAN if value is None else value


def _mark_published(
    reward_axes: Axes, calls_axes: Axes, steps: Sequence[StepMetrics], colour: str
) -> None:
    for step in steps:
        if step.published is None:
            continue
        for axes in (reward_axes, calls_axes):
            axes.axvline(step.step, color=colour, linestyle=":", linewidth=1, alpha=0.8)
        reward_axes.annotate(
            step.published,
            xy=(step.step, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(2, -4),
            textcoords="offset points",
            rotation=90,
            va="top",
            ha="left",
            fontsize="x-small",
            color=colour,
        )


def _title(by_harness: dict[str, list[StepMetrics]]) -> str:
    harnesses = ", ".join(by_harness)
    steps = max(len(steps) for steps in by_harness.values())
    return f"GRPO training: {harnesses} ({steps} step{'s' if steps != 1 else ''})"
