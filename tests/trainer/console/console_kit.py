"""Run directories as the trainer writes them: metrics logs, kept versions, eval reports."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from step_metrics_kit import make_step

from trainer._eval import BASE, Checkpoint, summarise
from trainer._eval_cli import _write
from trainer._metrics import MetricsLog
from trainer._publish import AdapterPublisher


class _NotServing:
    """The publisher's server and proxy: only :meth:`AdapterPublisher.record` is used."""

    def load_adapter(self, name: str, path: Path) -> None:
        raise AssertionError("recording a version loads nothing")

    def unload_adapter(self, name: str) -> None:
        raise AssertionError("recording a version unloads nothing")

    def set_alias(self, harness: str, model: str) -> None:
        raise AssertionError("recording a version repoints nothing")


def write_steps(directory: Path, steps: Iterable[int], *, harness: str = "toy") -> Path:
    """Append ``steps`` (from :func:`make_step`) to ``directory``'s metrics log."""
    path = directory / f"metrics-{harness}.jsonl"
    with MetricsLog(path) as log:
        for step in steps:
            log.append(make_step(step, harness=harness))
    return path


def keep_version(directory: Path, version: int, *, step: int, harness: str = "toy") -> Path:
    """Version ``version`` kept on disk with ``version.json``, as the training loop keeps it."""
    publisher = AdapterPublisher(
        harness=harness,
        output_dir=directory,
        server=_NotServing(),
        proxy=_NotServing(),
        max_staleness=1,
        keep_every=1,
    )
    publisher.path(version).mkdir(parents=True)
    recorded = publisher.record(version, step=step, metrics=make_step(step).to_json())
    assert recorded is not None
    return recorded


def _rollout(task: str, index: int, *, success: bool, calls: int, hacked: bool) -> dict[str, Any]:
    return {
        "task_id": task,
        "index": index,
        "status": "scored",
        "success": success,
        "tool_calls": calls,
        "hacked": hacked,
        "tokens": 100 + 10 * calls,
        "seconds": 2.0 + calls,
    }


def write_eval(directory: Path, *, harness: str = "toy") -> Path:
    """``safeagents eval``'s report for the base model and ``{harness}-v2``, over two tasks
    and two rollouts each: v2 succeeds more, with fewer calls and no hack."""
    base = [
        _rollout("a", 0, success=False, calls=9, hacked=True),
        _rollout("a", 1, success=True, calls=7, hacked=False),
        _rollout("b", 0, success=False, calls=8, hacked=False),
        _rollout("b", 1, success=False, calls=8, hacked=True),
    ]
    tuned = [
        _rollout("a", 0, success=True, calls=3, hacked=False),
        _rollout("a", 1, success=True, calls=4, hacked=False),
        _rollout("b", 0, success=True, calls=2, hacked=False),
        _rollout("b", 1, success=False, calls=5, hacked=False),
    ]
    reports = [
        summarise(Checkpoint(BASE, "tiny", 0), base, ["a", "b"], 2),
        summarise(Checkpoint(f"{harness}-v2", f"{harness}-v2", 2, step=4), tuned, ["a", "b"], 2),
    ]
    results = directory / f"eval-{harness}"
    args = argparse.Namespace(harness=harness, tasks="tasks/", rollouts=2)
    _write(reports, results, args, ["a", "b"], {BASE: 4, f"{harness}-v2": 4})
    return results / "eval.json"
