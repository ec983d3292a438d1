"""``validate_task``: structure, the oracle passes, the untouched workspace fails."""

from __future__ import annotations

from pathlib import Path

from task_kit import FIXED, write_task

from trainer.tasks import ScriptRun, Task, Verdict, validate_task, validate_tasks


def test_a_good_task_is_valid_with_both_rewards(tmp_path: Path) -> None:
    report = validate_task(write_task(tmp_path / "good"))
    assert report.valid, report.problems
    assert report.untouched is not None and report.untouched.reward == 0.0
    assert report.oracle is not None and report.oracle.reward == 1.0
    assert report.as_dict()["id"] == "good" and report.seconds > 0
    # validation never touches the task itself
    assert (tmp_path / "good" / "environment" / "workspace" / "mathy.py").read_text() != FIXED


def test_a_workspace_that_already_passes_is_invalid(tmp_path: Path) -> None:
    report = validate_task(write_task(tmp_path / "t", files={"mathy.py": FIXED}))
    assert report.problems == [
        f"{(tmp_path / 't').resolve()}: the untouched workspace already passes (reward 1): "
        "there is nothing to do"
    ]


def test_an_oracle_that_fails_or_does_not_pass_is_invalid(tmp_path: Path) -> None:
    crashed = validate_task(write_task(tmp_path / "crash", solve_sh="echo oops\nexit 3\n"))
    assert len(crashed.problems) == 1
    assert "solution/solve.sh: the oracle exited 3: oops" in crashed.problems[0]
    useless = validate_task(write_task(tmp_path / "useless", solve_sh="true\n"))
    assert len(useless.problems) == 1
    assert "the oracle does not pass (reward 0)" in useless.problems[0]


def test_a_task_without_oracle_or_reward_is_invalid_without_raising(tmp_path: Path) -> None:
    no_oracle = validate_task(write_task(tmp_path / "a", solve_sh=None))
    assert [p.split(": ", 1)[1] for p in no_oracle.problems] == [
        "missing solution/solve.sh (the oracle)"
    ]
    silent = validate_task(write_task(tmp_path / "b", test_sh="exit 0\n"))
    assert len(silent.problems) == 2  # both runs: no reward written
    assert all("the verifier wrote no reward" in p for p in silent.problems)
    unloadable = validate_task(write_task(tmp_path / "c", instruction=None))
    assert unloadable.problems == [f"{tmp_path / 'c'}: missing instruction.md (the prompt)"]


class _Recording:
    """A TaskRunner that records its calls: what a sandbox backend plugs in."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def solve(self, task: Task, workspace: Path) -> ScriptRun:
        self.calls.append(("solve", workspace.name))
        (workspace / "solved").write_text("yes")
        return ScriptRun(0, False)

    def verify(self, task: Task, workspace: Path) -> Verdict:
        self.calls.append(("verify", workspace.name))
        done = (workspace / "solved").is_file()
        return Verdict(done, float(done), 0, False, "reward.txt")


def test_the_runner_is_pluggable_and_gets_fresh_workspaces(tmp_path: Path) -> None:
    runner = _Recording()
    report = validate_task(write_task(tmp_path / "t"), runner)
    assert report.valid
    assert runner.calls == [("verify", "untouched"), ("solve", "oracle"), ("verify", "oracle")]


def test_many_tasks_in_order_with_missing_paths_reported(tmp_path: Path) -> None:
    write_task(tmp_path / "set" / "b")
    write_task(tmp_path / "set" / "a", solve_sh="true\n")
    seen: list[str] = []
    reports = validate_tasks(
        [tmp_path / "set", tmp_path / "nowhere"],
        jobs=2,
        on_report=lambda report: seen.append(report.path.name),
    )
    assert [(r.path.name, r.valid) for r in reports] == [
        ("nowhere", False),
        ("a", False),
        ("b", True),
    ]
    assert sorted(seen) == ["a", "b"]
