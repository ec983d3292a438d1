from __future__ import annotations

import json
import logging
import math
from dataclasses import fields, replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from step_metrics_kit import make_step

from trainer._metrics import MetricsLog, MetricsTail, StepMetrics, read_metrics, scan_metrics

counts = st.integers(min_value=0, max_value=10**9)
amounts = st.floats(min_value=0.0, max_value=1e9, allow_nan=False)
rates = st.floats(min_value=0.0, max_value=1.0)
step_metrics = st.builds(
    StepMetrics,
    step=st.integers(min_value=1, max_value=10**6),
    harness=st.text(min_size=1, max_size=20),
    version=counts,
    groups=counts,
    rollouts=counts,
    samples=counts,
    unscored=counts,
    reward_mean=st.none() | st.floats(allow_nan=False),
    success_rate=st.none() | rates,
    hack_rate=rates,
    tool_calls_mean=amounts,
    dropped_stale=counts,
    dropped_oversize=counts,
    tokens=counts,
    tokens_per_s=amounts,
    loss=st.none() | st.floats(allow_nan=False),
    step_seconds=amounts,
    elapsed_seconds=amounts,
    published=st.none() | st.text(max_size=20),
    importance_ratio_mean=st.none() | amounts,
    clip_fraction=st.none() | rates,
    forks=st.none() | counts,
    refused_sampling=st.none() | counts,
)


@settings(max_examples=150, deadline=None)
@given(step_metrics)
def test_json_text_round_trip_restores_every_field(metrics: StepMetrics) -> None:
    text = json.dumps(metrics.to_json())
    assert StepMetrics.from_json(json.loads(text)) == metrics


def test_to_json_has_every_field_in_order_with_plain_values() -> None:
    class Scalar:
        """A numpy/torch-like scalar that json cannot write itself."""

        def __init__(self, value: float) -> None:
            self.value = value

        def __float__(self) -> float:
            return self.value

    metrics = make_step(3, loss=Scalar(0.25), published="toy-v1")
    data = metrics.to_json()
    assert list(data) == [field.name for field in fields(StepMetrics)]
    assert data["loss"] == 0.25 and type(data["loss"]) is float
    assert data["published"] == "toy-v1"
    json.dumps(data)


def test_from_json_ignores_unknown_keys_and_defaults_published() -> None:
    data = make_step(2).to_json()
    del data["published"]
    data["lr"] = 1e-5
    assert StepMetrics.from_json(data) == make_step(2)


def test_from_json_lists_every_missing_and_mistyped_key() -> None:
    data = make_step(2).to_json()
    del data["loss"]
    del data["tokens"]
    data["groups"] = True
    data["hack_rate"] = "0.5"
    data["harness"] = 7
    with pytest.raises(ValueError) as caught:
        StepMetrics.from_json(data)
    message = str(caught.value)
    for part in ("missing 'loss'", "missing 'tokens'", "'groups' must be an integer, got True"):
        assert part in message
    assert "'hack_rate' must be a number" in message
    assert "'harness' must be a string" in message


def test_from_json_accepts_integers_for_floats() -> None:
    data = make_step(2).to_json()
    data["tokens_per_s"] = 300
    assert StepMetrics.from_json(data).tokens_per_s == 300.0


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"step": 0}, "step is 1-based"),
        ({"harness": ""}, "harness is empty"),
        ({"samples": -1}, "samples must be >= 0"),
        ({"tokens_per_s": math.nan}, "tokens_per_s must be >= 0"),
        ({"hack_rate": 1.5}, "hack_rate must be within [0, 1]"),
        ({"success_rate": math.nan}, "success_rate must be within [0, 1]"),
        ({"clip_fraction": 1.5}, "clip_fraction must be within [0, 1]"),
        ({"forks": -1}, "forks must be >= 0"),
        ({"importance_ratio_mean": -0.5}, "importance_ratio_mean must be >= 0"),
    ],
)
def test_impossible_values_are_refused(change: dict[str, object], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint.replace("[", r"\[")):
        replace(make_step(1), **change)  # type: ignore[arg-type]


def test_log_appends_one_flushed_line_per_step(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "metrics.jsonl"
    with MetricsLog(path) as log:
        log.append(make_step(1))
        assert path.read_text(encoding="utf-8").count("\n") == 1
        log.append(make_step(2, published="toy-v1"))
    with MetricsLog(path) as log:
        log.append(make_step(3))
    assert read_metrics(path) == [make_step(1), make_step(2, published="toy-v1"), make_step(3)]


def test_a_closed_log_refuses_appends_and_closes_twice(tmp_path: Path) -> None:
    log = MetricsLog(tmp_path / "metrics.jsonl")
    log.close()
    log.close()
    with pytest.raises(ValueError, match="closed"):
        log.append(make_step(1))


def test_a_diverged_loss_survives_the_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    with MetricsLog(path) as log:
        log.append(make_step(1, loss=math.nan))
        log.append(make_step(2, loss=math.inf))
    first, second = read_metrics(path)
    assert first.loss is not None and math.isnan(first.loss)
    assert second.loss == math.inf


def test_appending_after_a_torn_line_keeps_the_new_step_whole(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    with MetricsLog(path) as log:
        log.append(make_step(1))
    whole = path.read_text(encoding="utf-8")
    path.write_text(whole + whole[: len(whole) // 2], encoding="utf-8")
    with MetricsLog(path) as log:
        log.append(make_step(2))
    read = scan_metrics(path)
    assert read.metrics == (make_step(1), make_step(2))
    assert len(read.skipped) == 1 and read.skipped[0].startswith(f"{path}:2: not JSON")


def test_malformed_lines_are_skipped_counted_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = json.dumps(make_step(1).to_json())
    missing = make_step(2).to_json()
    del missing["step"]
    lines = [good, "{not json", "", "[1, 2]", json.dumps(missing), "   ", good]
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="safeagents.trainer"):
        metrics = read_metrics(path)
    assert metrics == [make_step(1), make_step(1)]
    read = scan_metrics(path)
    assert [problem.split(": ", 1)[0] for problem in read.skipped] == [
        f"{path}:2",
        f"{path}:4",
        f"{path}:5",
    ]
    assert "expected a JSON object, got list" in read.skipped[1]
    assert "missing 'step'" in read.skipped[2]
    assert f"skipped 3 malformed line(s) in {path}" in caplog.text
    assert f"{path}:2: not JSON" in caplog.text


def test_reading_a_missing_file_fails_loudly(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_metrics(tmp_path / "absent.jsonl")


def test_a_tail_reads_only_what_was_appended_since_and_waits_for_whole_lines(
    tmp_path: Path,
) -> None:
    path = tmp_path / "metrics.jsonl"
    tail = MetricsTail(path)
    assert tail.read().metrics == () and not tail.shrunk()  # not written yet
    with MetricsLog(path) as log:
        log.append(make_step(1))
        log.append(make_step(2))
    assert [m.step for m in tail.read().metrics] == [1, 2]
    assert (tail.offset, tail.line) == (path.stat().st_size, 2)
    line = json.dumps(make_step(3).to_json())
    with path.open("a") as handle:
        handle.write("\n[1]\n" + line[:20])
        handle.flush()
        torn = tail.read()
        assert torn.metrics == () and torn.skipped == (
            f"{path}:4: expected a JSON object, got list",
        )
        handle.write(line[20:] + "\n")
    assert [m.step for m in tail.read().metrics] == [3]
    assert tail.read() == tail.read() and tail.line == 5
    resumed = MetricsTail(path, offset=tail.offset, line=tail.line)
    with MetricsLog(path) as log:
        log.append(make_step(4))
    assert [m.step for m in resumed.read().metrics] == [4]
    path.write_text("")
    assert resumed.shrunk()


def test_a_tail_refuses_a_negative_position(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="must be >= 0"):
        MetricsTail(tmp_path / "m.jsonl", offset=-1)
