"""The default task runner: the oracle and the verifier as plain subprocesses, the reward as
Harbor reads it (reward.json, then reward.txt; the exit code is not the verdict)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from task_kit import write_task

from trainer.tasks import (
    LOGS_ENV,
    SubprocessRunner,
    VerifierError,
    copy_workspace,
    load_task,
    read_reward,
)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"reward.json": '{"reward": 0.5, "other": 3}'}, (0.5, "reward.json")),
        ({"reward.json": '{"accuracy": 1}'}, (1.0, "reward.json")),
        ({"reward.json": "0.25"}, (0.25, "reward.json")),
        ({"reward.json": '{"reward": 1}', "reward.txt": "0"}, (1.0, "reward.json")),
        ({"reward.txt": " 1\n"}, (1.0, "reward.txt")),
    ],
)
def test_the_reward_is_read_as_harbor_reads_it(
    tmp_path: Path, files: dict[str, str], expected: tuple[float, str]
) -> None:
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    assert read_reward(tmp_path) == expected


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "wrote no reward"),
        ({"reward.json": "{broken"}, "not JSON"),
        ({"reward.json": '{"a": 1, "b": 2}'}, "a 'reward' key or a single key"),
        ({"reward.json": '{"reward": true}'}, "finite number"),
        ({"reward.json": '{"reward": NaN}'}, "finite number"),
        ({"reward.txt": "passed"}, "not a number"),
        ({"reward.txt": "inf"}, "finite number"),
    ],
)
def test_a_missing_or_malformed_reward_is_the_tasks_bug(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    with pytest.raises(VerifierError, match=message):
        read_reward(tmp_path)


def test_the_untouched_workspace_fails_and_the_oracle_makes_it_pass(tmp_path: Path) -> None:
    task = load_task(write_task(tmp_path / "task"))
    runner = SubprocessRunner()
    workspace = copy_workspace(task, tmp_path / "rollout")
    failed = runner.verify(task, workspace)
    assert (failed.success, failed.reward, failed.source, failed.exit_code) == (
        False,
        0.0,
        "reward.txt",
        0,  # test.sh exits 0 either way: the reward is the verdict
    )
    assert "assert 7 == 10" in failed.output
    solved = runner.solve(task, workspace)
    assert (solved.exit_code, solved.timed_out) == (0, False)
    passed = runner.verify(task, workspace)
    assert (passed.success, passed.reward) == (True, 1.0)
    # the scripts ran from private copies: nothing of tests/ or solution/ in the workspace
    assert sorted(p.name for p in workspace.iterdir()) == ["mathy.py"]


def test_the_workspace_copy_leaves_the_dockerfile_behind(tmp_path: Path) -> None:
    task = load_task(write_task(tmp_path / "task", nested_workspace=False))
    workspace = copy_workspace(task, tmp_path / "rollout")
    assert sorted(p.name for p in workspace.iterdir()) == ["mathy.py"]


def test_a_verifier_that_hangs_is_killed_and_fails(tmp_path: Path) -> None:
    hang = f'echo 1 > "${LOGS_ENV}/reward.txt"\nsleep 30 &\nexec sleep 30\n'
    task = load_task(write_task(tmp_path / "task", test_sh=hang))
    verdict = SubprocessRunner(verify_timeout=0.5).verify(task, tmp_path / "task")
    assert verdict.timed_out and verdict.exit_code is None
    assert (verdict.success, verdict.reward, verdict.source) == (False, 0.0, "none")


def test_a_verifier_that_writes_no_reward_is_an_error(tmp_path: Path) -> None:
    task = load_task(write_task(tmp_path / "task", test_sh="echo looked fine\nexit 0\n"))
    with pytest.raises(VerifierError, match=r"task: the verifier wrote no reward.*looked fine"):
        SubprocessRunner().verify(task, tmp_path / "task")


def test_scripts_get_the_task_env_and_this_python(tmp_path: Path) -> None:
    toml = '[verifier]\nenv = { GREETING = "hello" }\n'
    script = (
        'python -c "import sys; print(sys.executable)"\necho "$GREETING"\n'
        f'echo \'{{"reward": 1}}\' > "${LOGS_ENV}/reward.json"\n'
    )
    task = load_task(write_task(tmp_path / "task", toml=toml, test_sh=script))
    verdict = SubprocessRunner().verify(task, tmp_path / "task")
    assert verdict.output.splitlines() == [sys.executable, "hello"]
    assert verdict.success and verdict.source == "reward.json"
