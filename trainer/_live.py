"""The live view of ``safeagents train``: the latest step of each harness, progress, curves.

On a terminal it is a rich :class:`~rich.live.Live` table redrawn in place, with notes
printed above it; elsewhere (a log file, CI) it prints one plain line per step and per note.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from trainer._batching import BASE_VERSION, adapter_name
from trainer._metrics import StepMetrics

__all__ = [
    "LiveView",
    "adapter_label",
    "format_duration",
    "format_number",
    "format_percent",
    "sparkline",
]

_BLOCKS = "▁▂▃▄▅▆▇█"
_SPARK_WIDTH = 40
_MISSING = "–"


def sparkline(values: Sequence[float | None], width: int = _SPARK_WIDTH) -> str:
    """The last ``width`` values as block characters scaled to their range; gaps for ``None``."""
    shown = list(values)[-width:] if width > 0 else []
    finite = [v for v in shown if v is not None and math.isfinite(v)]
    if not finite:
        return " " * len(shown)
    low, high = min(finite), max(finite)
    top = len(_BLOCKS) - 1

    def block(value: float | None) -> str:
        if value is None or not math.isfinite(value):
            return " "
        if high == low:
            return _BLOCKS[top // 2]
        return _BLOCKS[round((value - low) / (high - low) * top)]

    return "".join(block(value) for value in shown)


@dataclass(slots=True)
class _Track:
    """What the view remembers of one harness."""

    latest: StepMetrics
    first_reward: float | None = None
    rewards: list[float | None] = field(default_factory=list)
    tool_calls: list[float] = field(default_factory=list)
    published: str | None = None

    def add(self, metrics: StepMetrics) -> None:
        self.latest = metrics
        if self.first_reward is None:
            self.first_reward = metrics.reward_mean
        self.rewards.append(metrics.reward_mean)
        self.tool_calls.append(metrics.tool_calls_mean)
        if metrics.published is not None:
            self.published = metrics.published


class LiveView:
    """Shows training progress; use as a context manager around the training loop."""

    def __init__(
        self, *, title: str, total_steps: int | None, console: Console | None = None
    ) -> None:
        if total_steps is not None and total_steps < 1:
            raise ValueError(f"total_steps must be >= 1, got {total_steps}")
        self.title = title
        self.total_steps = total_steps
        self.console = console if console is not None else Console()
        self._tracks: dict[str, _Track] = {}
        self._lock = threading.Lock()
        self._live: Live | None = None

    def __enter__(self) -> Self:
        if self.console.is_terminal:
            self._live = Live(self, console=self.console, refresh_per_second=4)
            self._live.start()
        else:
            self._print(self.title)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def update(self, metrics: StepMetrics) -> None:
        """Record a finished step and show it."""
        with self._lock:
            track = self._tracks.get(metrics.harness)
            if track is None:
                track = self._tracks[metrics.harness] = _Track(metrics)
            track.add(metrics)
            line = self._step_line(metrics, track.first_reward)
        if self._live is not None:
            self._live.refresh()
        else:
            self._print(line)

    def note(self, text: str) -> None:
        """Show an event ("published toy-v2", "waiting for rollouts") above the table."""
        self._print(f"• {text}")

    def _print(self, text: str) -> None:
        console = self._live.console if self._live is not None else self.console
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _step_line(self, metrics: StepMetrics, first_reward: float | None) -> str:
        parts = [
            f"step {self._progress_label(metrics.step)}",
            adapter_label(metrics),
            f"groups {metrics.groups}",
            f"samples {metrics.samples}",
            f"reward {format_number(metrics.reward_mean)} (first {format_number(first_reward)})",
            f"success {format_percent(metrics.success_rate)}",
            f"hacked {format_percent(metrics.hack_rate)}",
            f"calls {format_number(metrics.tool_calls_mean, 1)}",
            f"stale {metrics.dropped_stale}",
            f"oversize {metrics.dropped_oversize}",
            f"zero-advantage {metrics.zero_advantage_groups}",
            f"age {metrics.staleness_steps_max} steps",
            f"{metrics.tokens_per_s:,.0f} tok/s",
            f"loss {format_number(metrics.loss, 4)}",
            f"{format_duration(metrics.step_seconds)}/step",
        ]
        if metrics.published is not None:
            parts.append(f"published {metrics.published}")
        return "  ".join(parts)

    def _progress_label(self, step: int) -> str:
        return str(step) if self.total_steps is None else f"{step}/{self.total_steps}"

    def __rich__(self) -> RenderableType:
        with self._lock:
            tracks = [(name, _snapshot(track)) for name, track in self._tracks.items()]
        return Group(self._header(tracks), _table(tracks))

    def _header(self, tracks: Sequence[tuple[str, _Track]]) -> RenderableType:
        step = max((track.latest.step for _, track in tracks), default=0)
        elapsed = max((track.latest.elapsed_seconds for _, track in tracks), default=0.0)
        header = Table.grid(padding=(0, 2))
        line: list[RenderableType] = [Text(self.title, style="bold")]
        if self.total_steps is not None:
            done = min(step, self.total_steps)
            line.append(ProgressBar(total=self.total_steps, completed=done, width=30))
        line.append(Text(f"step {self._progress_label(step)}"))
        timing = f"elapsed {format_duration(elapsed)}"
        if self.total_steps is not None and 0 < step < self.total_steps:
            timing += f"  eta {format_duration(elapsed / step * (self.total_steps - step))}"
        line.append(Text(timing, style="dim"))
        header.add_row(*line)
        return header


def _snapshot(track: _Track) -> _Track:
    return _Track(
        track.latest,
        track.first_reward,
        list(track.rewards),
        list(track.tool_calls),
        track.published,
    )


_Row = tuple[str, Callable[[_Track], RenderableType]]


def _rows() -> list[_Row]:
    return [
        ("adapter", lambda t: adapter_label(t.latest)),
        ("step", lambda t: str(t.latest.step)),
        ("groups / step", lambda t: str(t.latest.groups)),
        ("samples / step", _samples),
        ("reward mean", _reward),
        ("reward curve", lambda t: Text(sparkline(t.rewards), style="cyan")),
        ("success rate", lambda t: format_percent(t.latest.success_rate)),
        ("hack rate", _hack_rate),
        ("tool calls (mean)", lambda t: format_number(t.latest.tool_calls_mean, 1)),
        ("tool-call curve", lambda t: Text(sparkline(t.tool_calls), style="magenta")),
        ("dropped: stale", lambda t: str(t.latest.dropped_stale)),
        ("dropped: oversize", lambda t: str(t.latest.dropped_oversize)),
        ("zero-advantage groups", lambda t: str(t.latest.zero_advantage_groups)),
        ("staleness (steps, max)", lambda t: str(t.latest.staleness_steps_max)),
        ("tokens / s", lambda t: f"{t.latest.tokens_per_s:,.0f}  ({t.latest.tokens:,} tokens)"),
        ("loss", lambda t: format_number(t.latest.loss, 4)),
        ("step time", lambda t: format_duration(t.latest.step_seconds)),
        ("last published", lambda t: escape(t.published or _MISSING)),
    ]


def _table(tracks: Sequence[tuple[str, _Track]]) -> RenderableType:
    if not tracks:
        return Text("waiting for the first step…", style="dim")
    table = Table(show_header=len(tracks) > 1, box=None, padding=(0, 2))
    table.add_column(style="bold")
    for name, _ in tracks:
        table.add_column(escape(name))
    for label, cell in _rows():
        table.add_row(label, *(cell(track) for _, track in tracks))
    return table


def adapter_label(metrics: StepMetrics) -> str:
    if metrics.version == BASE_VERSION:
        return f"{metrics.harness} (base)"
    return adapter_name(metrics.harness, metrics.version)


def _samples(track: _Track) -> str:
    latest = track.latest
    return f"{latest.samples}  ({latest.rollouts} rollouts, {latest.unscored} unscored)"


def _reward(track: _Track) -> RenderableType:
    current, first = track.latest.reward_mean, track.first_reward
    text = Text(format_number(current))
    if first is not None and current is not None and len(track.rewards) > 1:
        delta = current - first
        style = "green" if delta > 0 else "red" if delta < 0 else "dim"
        text.append(f"  (first {format_number(first)}, ", style="dim")
        text.append(f"{delta:+.3f}", style=style)
        text.append(")", style="dim")
    return text


def _hack_rate(track: _Track) -> RenderableType:
    rate = track.latest.hack_rate
    return Text(format_percent(rate), style="red" if rate > 0 else "green")


def format_number(value: float | None, digits: int = 3) -> str:
    return _MISSING if value is None else f"{value:.{digits}f}"


def format_percent(value: float | None) -> str:
    return _MISSING if value is None else f"{value:.1%}"


def format_duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return _MISSING
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
