from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text
from step_metrics_kit import make_step

from trainer._live import LiveView, sparkline


def console(*, terminal: bool, width: int = 160) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=width), buffer


def rendered(view: LiveView) -> str:
    """The view's table as plain text, as the live display draws it."""
    out, buffer = console(terminal=False)
    out.print(view)
    return buffer.getvalue()


def test_sparkline_scales_values_to_the_blocks() -> None:
    assert sparkline([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]) == "▁▂▃▄▅▆▇█"
    assert sparkline([3.0, None, -1.0, float("nan")]) == "█ ▁ "
    assert sparkline([2.0, 2.0]) == "▄▄"
    assert sparkline([None, None]) == "  "
    assert sparkline([]) == ""


def test_sparkline_keeps_the_latest_values_within_its_width() -> None:
    line = sparkline([float(v) for v in range(100)], width=10)
    assert line == "▁▂▃▃▄▅▆▆▇█"


def test_without_a_terminal_each_step_and_note_is_one_plain_line() -> None:
    out, buffer = console(terminal=False, width=60)
    with LiveView(title="GRPO toy", total_steps=5, console=out) as view:
        view.update(make_step(1))
        view.note("waiting for rollouts")
        view.update(make_step(2, reward_mean=0.25, published="toy-v1"))
    lines = buffer.getvalue().splitlines()
    assert "\x1b" not in buffer.getvalue()
    assert lines[0] == "GRPO toy"
    assert lines[2] == "• waiting for rollouts"
    first, second = lines[1], lines[3]
    assert first.startswith("step 1/5  toy (base)  groups 4  samples 29  reward 0.100")
    assert "success 12.5%  hacked 12.5%  calls 8.5  stale 1  oversize 1  zero-advantage 0" in first
    assert "250 tok/s  loss 0.5000  4.0s/step" in first
    assert second.startswith("step 2/5  toy (base)")
    assert "reward 0.250 (first 0.100)" in second
    assert second.endswith("published toy-v1")
    assert len(lines) == 4


def test_the_table_shows_the_latest_step_against_the_first() -> None:
    view = LiveView(title="GRPO toy", total_steps=10, console=console(terminal=False)[0])
    for step in range(1, 5):  # usable without entering it: rendered on demand
        view.update(make_step(step, published="toy-v1" if step == 3 else None))
    text = rendered(view)
    assert "GRPO toy" in text and "step 4/10" in text
    assert "elapsed 16.0s  eta 24.0s" in text
    rows = {line.split("  ", 2)[1].strip(): line for line in text.splitlines() if "  " in line}
    assert "toy-v1" in rows["adapter"]
    assert "32  (32 rollouts, 1 unscored)" in rows["samples / step"]
    assert "0.400  (first 0.100, +0.300)" in rows["reward mean"]
    assert "▁▃▆█" in rows["reward curve"]
    assert "█▆▃▁" in rows["tool-call curve"]
    assert "50.0%" in rows["success rate"]
    assert "12.5%" in rows["hack rate"]
    assert "7.0" in rows["tool calls (mean)"]
    assert rows["dropped: stale"].rstrip().endswith("1")
    assert "1,000  (4,000 tokens)" in rows["tokens / s"]
    assert "0.1250" in rows["loss"]
    assert "toy-v1" in rows["last published"]


def test_each_harness_gets_its_own_column_and_baseline() -> None:
    view = LiveView(title="two", total_steps=None, console=console(terminal=False)[0])
    view.update(make_step(1, harness="opencode", reward_mean=0.5))
    view.update(make_step(1, harness="pi", reward_mean=0.2))
    view.update(make_step(2, harness="opencode", reward_mean=0.75))
    view.update(make_step(2, harness="pi", reward_mean=0.1))
    text = rendered(view)
    assert "opencode" in text.splitlines()[1] and "pi" in text.splitlines()[1]
    assert "step 2" in text and "step 2/" not in text
    assert "(first 0.500, +0.250)" in text
    assert "(first 0.200, -0.100)" in text


def test_before_the_first_step_the_view_says_it_is_waiting() -> None:
    view = LiveView(title="GRPO toy", total_steps=3, console=console(terminal=False)[0])
    text = rendered(view)
    assert "waiting for the first step" in text and "step 0/3" in text


def test_on_a_terminal_the_live_table_is_drawn_and_notes_printed() -> None:
    out, buffer = console(terminal=True)
    with LiveView(title="GRPO toy", total_steps=4, console=out) as view:
        view.update(make_step(1))
        view.note("published toy-v1")
        view.update(make_step(2, reward_mean=0.5))
    assert "\x1b[" in buffer.getvalue()
    plain = Text.from_ansi(buffer.getvalue()).plain
    assert "• published toy-v1" in plain
    assert "0.500  (first 0.100, +0.400)" in plain
    assert "step 2/4" in plain
    assert "━" in plain  # the progress bar


def test_total_steps_must_be_positive() -> None:
    with pytest.raises(ValueError, match="total_steps"):
        LiveView(title="x", total_steps=0)
