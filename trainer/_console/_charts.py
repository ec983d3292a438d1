"""Chart geometry for the pages: values scaled into an SVG box, drawn by the templates.

Server-side SVG needs no script, library or build step and shows in any browser, with or
without the console's stylesheet; a live page swaps in charts the server drew again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Bar", "BarChart", "Line", "LineChart", "Point", "Tick", "bar_chart", "line_chart"]

WIDTH = 480
HEIGHT = 210
_LEFT, _RIGHT, _TOP, _BOTTOM = 52.0, 12.0, 14.0, 34.0
_TICKS = 4
MARKED_POINTS = 500
COLOURS = ("#2563eb", "#dc2626", "#059669", "#d97706")

Values = Sequence[float | None]
SeriesSpec = tuple[str, str, Values]
"""``(key, label, values)``: one line or one set of bars."""


@dataclass(frozen=True, slots=True)
class Tick:
    position: float
    label: str


@dataclass(frozen=True, slots=True)
class Point:
    x: float
    y: float
    title: str


@dataclass(frozen=True, slots=True)
class Line:
    key: str
    label: str
    colour: str
    path: str
    """SVG path data; a missing value breaks the line."""
    points: tuple[Point, ...]

    @property
    def marked(self) -> bool:
        """Whether each point gets a marker (with its value on hover): not on long runs,
        where thousands of markers would only slow the page down."""
        return len(self.points) <= MARKED_POINTS


@dataclass(frozen=True, slots=True)
class _Box:
    left: float = _LEFT
    top: float = _TOP
    right: float = WIDTH - _RIGHT
    bottom: float = HEIGHT - _BOTTOM


@dataclass(frozen=True, slots=True)
class LineChart:
    key: str
    title: str
    lines: tuple[Line, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    box: _Box
    width: int = WIDTH
    height: int = HEIGHT

    @property
    def empty(self) -> bool:
        return not any(line.points for line in self.lines)

    @property
    def legend(self) -> tuple[tuple[str, str], ...]:
        """``(label, colour)`` of each line."""
        return tuple((line.label, line.colour) for line in self.lines)


@dataclass(frozen=True, slots=True)
class Bar:
    key: str
    x: float
    y: float
    width: float
    height: float
    colour: str
    title: str


@dataclass(frozen=True, slots=True)
class BarChart:
    key: str
    title: str
    legend: tuple[tuple[str, str], ...]
    """``(label, colour)`` of each series."""
    bars: tuple[Bar, ...]
    categories: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    box: _Box
    width: int = WIDTH
    height: int = HEIGHT


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _format(value: float, *, percent: bool, digits: int) -> str:
    return f"{value:.0%}" if percent else f"{value:,.{digits}f}"


def _range(values: Sequence[float], low: float | None, high: float | None) -> tuple[float, float]:
    bottom = min([*values, *([] if low is None else [low])], default=0.0)
    top = max([*values, *([] if high is None else [high])], default=1.0)
    if top == bottom:
        return bottom - 1.0, top + 1.0
    return bottom, top


def _nice_ticks(low: float, high: float, percent: bool, digits: int) -> list[tuple[float, str]]:
    raw = (high - low) / _TICKS
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    if digits == 0 and not percent:
        step = max(1.0, math.ceil(step))  # counts and steps: whole ticks only
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        shown = 0.0 if abs(value) < step * 1e-9 else value
        ticks.append((shown, _format(shown, percent=percent, digits=digits)))
        value += step
    return ticks


def line_chart(
    key: str,
    title: str,
    xs: Sequence[int],
    series: Sequence[SeriesSpec],
    *,
    low: float | None = None,
    high: float | None = None,
    percent: bool = False,
    digits: int = 3,
) -> LineChart:
    """One line per series over the steps ``xs`` (each series has a value per step)."""
    box = _Box()
    finite = [v for _, _, values in series for v in values if _finite(v)]
    y_low, y_high = _range([float(v) for v in finite if v is not None], low, high)
    x_low, x_high = (min(xs), max(xs)) if xs else (0, 1)
    if x_low == x_high:
        x_low, x_high = x_low - 1, x_high + 1

    def sx(x: float) -> float:
        return round(box.left + (x - x_low) / (x_high - x_low) * (box.right - box.left), 2)

    def sy(y: float) -> float:
        return round(box.bottom - (y - y_low) / (y_high - y_low) * (box.bottom - box.top), 2)

    lines: list[Line] = []
    for index, (series_key, label, values) in enumerate(series):
        points: list[Point] = []
        commands: list[str] = []
        pen_down = False
        for x, value in zip(xs, values, strict=True):
            if value is None or not math.isfinite(value):
                pen_down = False
                continue
            shown = _format(value, percent=percent, digits=digits)
            point = Point(sx(x), sy(value), f"{label}, step {x}: {shown}")
            commands.append(f"{'L' if pen_down else 'M'}{point.x},{point.y}")
            points.append(point)
            pen_down = True
        colour = COLOURS[index % len(COLOURS)]
        lines.append(Line(series_key, label, colour, " ".join(commands), tuple(points)))
    y_ticks = tuple(Tick(sy(v), text) for v, text in _nice_ticks(y_low, y_high, percent, digits))
    x_ticks = tuple(
        Tick(sx(v), str(int(v)))
        for v, _ in _nice_ticks(float(x_low), float(x_high), False, 0)
        if float(v).is_integer()
    )
    return LineChart(key, title, tuple(lines), x_ticks, y_ticks, box)


def bar_chart(
    key: str,
    title: str,
    categories: Sequence[str],
    series: Sequence[SeriesSpec],
    *,
    high: float | None = None,
    percent: bool = False,
    digits: int = 2,
) -> BarChart:
    """A group of bars per category, one bar per series; a missing value draws no bar."""
    box = _Box()
    finite = [float(v) for _, _, values in series for v in values if v is not None and _finite(v)]
    y_low, y_high = _range(finite, 0.0, high)
    slot = (box.right - box.left) / max(1, len(categories))
    width = slot * 0.8 / max(1, len(series))

    def sy(y: float) -> float:
        return round(box.bottom - (y - y_low) / (y_high - y_low) * (box.bottom - box.top), 2)

    bars: list[Bar] = []
    for index, (series_key, label, values) in enumerate(series):
        colour = COLOURS[index % len(COLOURS)]
        for position, (category, value) in enumerate(zip(categories, values, strict=True)):
            if value is None or not math.isfinite(value):
                continue
            x = box.left + slot * position + slot * 0.1 + width * index
            top = sy(max(value, y_low))
            shown = _format(value, percent=percent, digits=digits)
            bars.append(
                Bar(
                    series_key,
                    round(x, 2),
                    top,
                    round(width, 2),
                    round(box.bottom - top, 2),
                    colour,
                    f"{category}, {label}: {shown}",
                )
            )
    ticks = tuple(Tick(sy(v), text) for v, text in _nice_ticks(y_low, y_high, percent, digits))
    names = tuple(
        Tick(round(box.left + slot * (i + 0.5), 2), name) for i, name in enumerate(categories)
    )
    legend = tuple((label, COLOURS[i % len(COLOURS)]) for i, (_, label, _) in enumerate(series))
    return BarChart(key, title, legend, tuple(bars), names, ticks, box)
