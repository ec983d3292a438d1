"""SandboxRunner: ``tasks validate``'s oracle and verifier inside the local sandbox."""

from __future__ import annotations

from pathlib import Path

from harness_env_kit import make_task_dir
from sandbox_kit import require_sandbox

from trainer._sandbox_runner import SandboxRunner
from trainer.tasks import validate_task


def test_a_valid_task_validates_in_the_sandbox(tmp_path: Path) -> None:
    runner = SandboxRunner(require_sandbox(tmp_path / "sandboxes"))
    report = validate_task(make_task_dir(tmp_path / "tasks"), runner)
    assert report.valid, report.problems
    assert report.untouched is not None and report.untouched.reward == 0.0
    assert report.oracle is not None and report.oracle.reward == 1.0
    assert report.oracle.source == "reward.txt"


def test_the_oracle_sees_neither_the_hidden_tests_nor_the_task(tmp_path: Path) -> None:
    runner = SandboxRunner(require_sandbox(tmp_path / "sandboxes"))
    root = make_task_dir(tmp_path / "tasks")
    (root / "solution" / "solve.sh").write_text(
        f"#!/bin/bash\ncat /tests/test_calc.py {root}/tests/test_calc.py\n"
    )
    report = validate_task(root, runner)
    assert not report.valid
    assert "the oracle exited 1" in report.problems[0]
    assert report.problems[0].count("No such file or directory") == 2
