"""Task directories and verifiers: validation, the verifier run, and where the reward comes from."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from trainer._task_dirs import (
    REWARD_FILE,
    TaskDirError,
    VerifierError,
    load_task_dirs,
    parse_reward,
    run_verifier,
)


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _task(tasks: Path, name: str, *, prompt: str = "do it", verify: str = "exit 0\n") -> Path:
    root = tasks / name
    (root / "workspace").mkdir(parents=True)
    (root / "instruction.md").write_text(prompt)
    _script(root / "verify", verify)
    return root


def test_valid_tasks_load_sorted_with_their_prompts(tmp_path: Path) -> None:
    _task(tmp_path, "t2", prompt="second")
    _task(tmp_path, "t1", prompt="first\n")
    (tmp_path / "README.md").write_text("not a task")
    loaded = load_task_dirs(tmp_path)
    assert [(task.id, task.prompt) for task in loaded] == [("t1", "first\n"), ("t2", "second")]
    assert loaded[0].workspace == (tmp_path / "t1" / "workspace").resolve()
    assert loaded[0].verify == (tmp_path / "t1" / "verify").resolve()


def test_every_problem_of_every_task_is_listed(tmp_path: Path) -> None:
    _task(tmp_path, "fine")
    (tmp_path / "bare").mkdir()
    blank = _task(tmp_path, "blank", prompt="  \n")
    (blank / "verify").chmod(0o644)
    with pytest.raises(TaskDirError) as raised:
        load_task_dirs(tmp_path)
    assert raised.value.problems == [
        f"{tmp_path / 'bare'}: missing instruction.md (the prompt)",
        f"{tmp_path / 'bare'}: missing workspace/ (copied for every rollout)",
        f"{tmp_path / 'bare'}: missing verify (the verifier; exit 0 = success)",
        f"{tmp_path / 'blank' / 'instruction.md'}: empty prompt",
        f"{tmp_path / 'blank' / 'verify'}: not executable (chmod +x it)",
    ]


def test_a_missing_or_empty_tasks_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TaskDirError, match="not a directory"):
        load_task_dirs(tmp_path / "nowhere")
    with pytest.raises(TaskDirError, match="no task directories"):
        load_task_dirs(tmp_path)


@pytest.mark.parametrize(
    ("exit_code", "stdout", "file", "expected"),
    [
        (0, "all good\n", None, (1.0, "exit code")),
        (1, "", None, (0.0, "exit code")),
        (None, "", None, (0.0, "exit code")),
        (0, 'log\n{"reward": 0.25}\n\n', None, (0.25, "stdout")),
        (1, '{"reward": 2}', None, (2.0, "stdout")),
        (0, '{"reward": 0.5}\nnot json at the end', None, (1.0, "exit code")),
        (0, '{"score": 0.5}', None, (1.0, "exit code")),
        (0, "[0.5]", None, (1.0, "exit code")),
        (1, '{"reward": 0.1}', {"reward": 0.75}, (0.75, "reward.json")),
    ],
)
def test_the_reward_comes_from_reward_json_then_the_last_line_then_the_exit_code(
    tmp_path: Path,
    exit_code: int | None,
    stdout: str,
    file: dict[str, float] | None,
    expected: tuple[float, str],
) -> None:
    reward_file = tmp_path / REWARD_FILE
    if file is not None:
        reward_file.write_text(json.dumps(file))
    assert parse_reward(exit_code, stdout, reward_file) == expected


@pytest.mark.parametrize(
    ("stdout", "file"),
    [
        ("", "{broken"),
        ("", '{"score": 1}'),
        ("", '{"reward": "high"}'),
        ("", '{"reward": true}'),
        ('{"reward": NaN}', None),
        ('{"reward": null}', None),
    ],
)
def test_a_malformed_reward_is_the_tasks_bug(tmp_path: Path, stdout: str, file: str | None) -> None:
    reward_file = tmp_path / REWARD_FILE
    if file is not None:
        reward_file.write_text(file)
    with pytest.raises(VerifierError):
        parse_reward(0, stdout, reward_file)


def test_the_verifier_runs_in_the_workspace_and_its_reward_file_counts(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "answer.txt").write_text("42")
    verify = _script(
        tmp_path / "verify",
        "grep -q 42 answer.txt || exit 3\necho '{\"reward\": 0.5}' > reward.json\necho checked\n",
    )
    verdict = run_verifier(verify, workspace, timeout=30)
    assert (verdict.success, verdict.reward, verdict.exit_code, verdict.source) == (
        True,
        0.5,
        0,
        "reward.json",
    )
    assert "checked" in verdict.output and not verdict.timed_out
    (workspace / "answer.txt").write_text("41")
    (workspace / REWARD_FILE).unlink()
    failed = run_verifier(verify, workspace, timeout=30)
    assert (failed.success, failed.reward, failed.exit_code) == (False, 0.0, 3)


def test_a_reward_file_the_agent_left_is_removed_before_the_verifier_runs(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / REWARD_FILE).write_text('{"reward": 100}')
    verify = _script(tmp_path / "verify", "echo failing >&2\nexit 1\n")
    verdict = run_verifier(verify, workspace, timeout=30)
    assert (verdict.success, verdict.reward, verdict.source) == (False, 0.0, "exit code")
    assert not (workspace / REWARD_FILE).exists()
    assert "failing" in verdict.output


def test_a_verifier_that_hangs_is_killed_and_fails(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    verify = _script(tmp_path / "verify", "echo '{\"reward\": 1}'\nexec sleep 30\n")
    verdict = run_verifier(verify, workspace, timeout=0.5)
    assert verdict.timed_out and verdict.exit_code is None
    assert (verdict.success, verdict.reward) == (False, 0.0)


def test_the_verifiers_python_is_this_one(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    verify = _script(tmp_path / "verify", "python -c 'import sys; print(sys.executable)'\n")
    assert run_verifier(verify, workspace, timeout=30).output == sys.executable
