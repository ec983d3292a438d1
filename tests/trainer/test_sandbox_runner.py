"""SandboxRunner: ``tasks validate``'s oracle and verifier inside a sandbox (``--sandbox``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness_env_kit import make_task_dir
from sandbox_kit import require_harbor, require_sandbox

from safeagents.cli import main
from trainer._sandbox_runner import SandboxRunner
from trainer.sandbox import HARBOR_PYTHON_ENV
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


def test_tasks_validate_runs_the_checks_in_the_sandbox_it_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_sandbox()
    root = make_task_dir(tmp_path / "tasks")
    secret = tmp_path / "host-secret.txt"
    secret.write_text("only on the host\n")
    solve = root / "solution" / "solve.sh"
    solve.write_text(
        solve.read_text().replace("#!/bin/bash\n", f"#!/bin/bash\nset -e\ncat {secret}\n")
    )
    assert main(["tasks", "validate", str(root)]) == 0  # a plain subprocess reads the host
    assert "1 valid" in capsys.readouterr().out
    assert main(["tasks", "validate", str(root), "--sandbox"]) == 1  # the sandbox does not
    out = capsys.readouterr().out
    assert "the oracle exited 1" in out and "No such file or directory" in out
    require_harbor()
    assert main(["tasks", "validate", str(root), "--sandbox", "harbor"]) == 1
    assert "the oracle exited 1" in capsys.readouterr().out


def test_tasks_validate_sandbox_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_task_dir(tmp_path / "tasks")
    assert main(["tasks", "validate", str(root), "--harbor-env", "docker"]) == 2
    assert "--harbor-env needs --sandbox harbor" in capsys.readouterr().err
    monkeypatch.setenv(HARBOR_PYTHON_ENV, str(tmp_path / "no-python"))
    assert main(["tasks", "validate", str(root), "--sandbox", "harbor"]) == 2
    err = capsys.readouterr().err
    assert "the harbor sandbox:" in err and "scripts/install-harbor" in err
    assert "Traceback" not in err
