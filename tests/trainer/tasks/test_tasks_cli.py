"""``safeagents tasks validate``: a per-task report, exit 1 on any invalid task, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from task_kit import write_task

from safeagents.cli import main


def test_validate_reports_each_task_and_exits_1_on_an_invalid_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_task(tmp_path / "set" / "good")
    write_task(tmp_path / "set" / "bad", toml='[verifier]\ntimeout_sec = "x"\n')
    report = tmp_path / "report.json"
    code = main(["tasks", "validate", str(tmp_path / "set"), "--json", str(report)])
    out = capsys.readouterr().out
    assert code == 1
    assert "valid   good  untouched 0, oracle 1" in out
    bad = tmp_path / "set" / "bad"
    assert f"INVALID {bad}\n  {bad}/task.toml:2:1: verifier.timeout_sec:" in out
    assert "1 valid, 1 invalid of 2" in out and "Traceback" not in out
    written = json.loads(report.read_text())
    assert [(r["id"], r["valid"]) for r in written] == [("bad", False), ("good", True)]


def test_validate_exits_0_when_every_task_is_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_task(tmp_path / "only")
    assert main(["tasks", "validate", str(tmp_path / "only"), "--jobs", "1"]) == 0
    assert "1 valid, 0 invalid of 1" in capsys.readouterr().out


def test_validate_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "validate", str(tmp_path), "--jobs", "0"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err
    assert main(["tasks", "validate", str(tmp_path / "nowhere")]) == 1
    assert "not a directory" in capsys.readouterr().out
