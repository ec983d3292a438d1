"""The PNG of an evaluation: one group of bars per checkpoint, in the order given.

Three panels: accuracy (pass@1 and the mean over K), mean tool calls, and hack rate. As in
:mod:`trainer._plot`, matplotlib is imported only to draw, through the Agg canvas.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from trainer._eval import CheckpointReport

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["eval_figure", "plot_eval"]

_NAN = float("nan")


def plot_eval(reports: Sequence[CheckpointReport], path: Path, *, title: str) -> Path:
    """Write the comparison of ``reports`` to ``path`` (PNG) and return it."""
    figure = eval_figure(reports, title=title)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    return path


def eval_figure(reports: Sequence[CheckpointReport], *, title: str) -> Figure:
    if not reports:
        raise ValueError("no checkpoint to plot")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(max(6.0, 1.2 * len(reports) + 3.0), 7.2), dpi=110)
    FigureCanvasAgg(figure)
    accuracy, calls, hacks = figure.subplots(3, 1, sharex=True)
    names = [report.checkpoint for report in reports]
    xs = list(range(len(reports)))
    width = 0.38
    accuracy.bar(
        [x - width / 2 for x in xs], [_gap(r.pass_at_1) for r in reports], width, label="pass@1"
    )
    accuracy.bar(
        [x + width / 2 for x in xs],
        [_gap(r.mean_success) for r in reports],
        width,
        label="mean over K",
    )
    accuracy.set_ylim(0, 1.05)
    accuracy.set_ylabel("accuracy")
    accuracy.legend(fontsize="small", loc="best")
    accuracy.set_title(title)
    calls.bar(xs, [_gap(r.tool_calls_mean) for r in reports], 0.6, color="C2")
    calls.set_ylabel("tool calls / session")
    hacks.bar(xs, [_gap(r.hack_rate) for r in reports], 0.6, color="C3")
    hacks.set_ylabel("hack rate")
    hacks.set_ylim(0, 1.05)
    hacks.set_xticks(xs, names)
    for axes in (accuracy, calls, hacks):
        axes.grid(True, axis="y", alpha=0.3)
    figure.tight_layout()
    return figure


def _gap(value: float | None) -> float:
    return _NAN if value is None else value
