"""What the pages show of a run: its latest step, what it published, and a log that cannot be
read named rather than raised."""

from __future__ import annotations

from pathlib import Path

from console_kit import write_steps
from step_metrics_kit import make_step

from trainer._console._runs import Run
from trainer._console._views import number, percent, read_run, seconds
from trainer._metrics import MetricsLog


def test_a_run_state_knows_its_latest_step_and_what_it_published(tmp_path: Path) -> None:
    write_steps(tmp_path, [1, 2])
    with MetricsLog(tmp_path / "metrics-toy.jsonl") as log:
        log.append(make_step(3, published="toy-v1"))
    state = read_run(Run("k/toy", "toy", tmp_path))
    assert state.latest is not None and state.latest.step == 3
    assert (state.adapter, state.published) == ("toy-v1", ["toy-v1"])
    assert state.position == f"{(tmp_path / 'metrics-toy.jsonl').stat().st_size}:3"
    assert state.updated.endswith(" UTC")


def test_a_log_that_cannot_be_read_is_named_not_raised(tmp_path: Path) -> None:
    (tmp_path / "metrics-toy.jsonl").mkdir()  # replaced under the console by a directory
    state = read_run(Run("k/toy", "toy", tmp_path))
    assert state.steps == () and state.position == "0:0"
    assert state.skipped == ("metrics-toy.jsonl: cannot be read (Is a directory)",)
    assert "cannot be read" in "".join(state.live()["skipped"])


def test_table_cells_show_a_dash_for_what_is_not_a_number() -> None:
    assert [number(0.25), number(None), number("x"), number(True), number(float("nan"))] == [
        "0.250",
        "–",
        "–",
        "–",
        "–",
    ]
    assert (percent(0.5), percent("half"), seconds(75.0), seconds(None)) == (
        "50.0%",
        "–",
        "1m15s",
        "–",
    )
