"""Chart geometry: values scaled into the plot box, gaps for missing values, whole ticks
for counts, and the console subpackage's modules export what they define."""

from __future__ import annotations

import importlib
import math

import pytest

from trainer._console._charts import bar_chart, line_chart


def test_a_line_spans_the_box_and_rises_with_its_values() -> None:
    chart = line_chart("r", "Reward", [1, 2, 3], [("r", "reward", [0.0, 0.5, 1.0])])
    (line,) = chart.lines
    xs = [p.x for p in line.points]
    ys = [p.y for p in line.points]
    assert xs[0] == chart.box.left and xs[-1] == chart.box.right
    assert ys[0] == chart.box.bottom and ys[-1] == chart.box.top
    assert line.path.startswith(f"M{xs[0]},{ys[0]} L")
    assert not chart.empty and chart.legend == (("reward", line.colour),)


def test_a_missing_or_infinite_value_breaks_the_line() -> None:
    values = [0.1, None, 0.3, math.inf, 0.5]
    chart = line_chart("r", "Reward", [1, 2, 3, 4, 5], [("r", "reward", values)])
    (line,) = chart.lines
    assert len(line.points) == 3
    assert line.path.count("M") == 3 and "L" not in line.path


def test_a_chart_of_nothing_is_empty_and_one_value_still_has_a_range() -> None:
    assert line_chart("r", "Reward", [], [("r", "reward", [])]).empty
    single = line_chart("r", "Reward", [4], [("r", "reward", [0.25])])
    (point,) = single.lines[0].points
    assert single.box.top < point.y < single.box.bottom
    assert single.box.left < point.x < single.box.right


def test_rates_are_drawn_on_zero_to_one_and_counts_get_whole_ticks() -> None:
    rates = line_chart(
        "h", "Hack", [1, 2], [("h", "hack", [0.2, 0.4])], low=0, high=1, percent=True
    )
    assert [t.label for t in rates.y_ticks] == ["0%", "25%", "50%", "75%", "100%"]
    counts = line_chart("d", "Dropped", [1, 2, 3], [("d", "stale", [0, 2, 1])], low=0, digits=0)
    assert [t.label for t in counts.y_ticks] == ["0", "1", "2"]
    assert [t.label for t in counts.x_ticks] == ["1", "2", "3"]


def test_bars_stand_on_zero_side_by_side_and_skip_missing_values() -> None:
    chart = bar_chart(
        "a",
        "Accuracy",
        ["base", "v2"],
        [("p", "pass@1", [0.5, 1.0]), ("m", "mean", [None, 0.25])],
        high=1.0,
    )
    assert [bar.title for bar in chart.bars] == [
        "base, pass@1: 0.50",
        "v2, pass@1: 1.00",
        "v2, mean: 0.25",
    ]
    for bar in chart.bars:
        assert bar.y + bar.height == pytest.approx(chart.box.bottom)
    full = chart.bars[1]
    assert full.y == chart.box.top
    assert chart.bars[2].x == pytest.approx(full.x + full.width)


@pytest.mark.parametrize("module", ["_app", "_charts", "_runs", "_templates", "_views"])
def test_console_modules_export_what_they_define(module: str) -> None:
    loaded = importlib.import_module(f"trainer._console.{module}")
    assert loaded.__all__ == sorted(loaded.__all__, key=lambda name: (not name.isupper(), name))
    assert all(hasattr(loaded, name) for name in loaded.__all__)
    defined = {
        name
        for name, value in vars(loaded).items()
        if not name.startswith("_")
        and getattr(value, "__module__", None) == loaded.__name__
        and callable(value)
    }
    assert defined <= set(loaded.__all__)


def test_a_long_run_draws_its_line_without_a_marker_per_point() -> None:
    steps = list(range(1, 2002))
    chart = line_chart("r", "Reward", steps, [("r", "reward", [s / 2001 for s in steps])])
    (line,) = chart.lines
    assert len(line.points) == 2001 and line.path.count("L") == 2000
    assert not line.marked
    assert line_chart("r", "Reward", [1, 2], [("r", "reward", [0.1, 0.2])]).lines[0].marked
