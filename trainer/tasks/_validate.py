"""``tasks validate``: a task is valid when it loads, its oracle passes and the untouched
workspace fails, each run on a fresh copy of the workspace through a :class:`TaskRunner`."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from trainer.tasks._load import Task, TaskDirError, find_task_dirs, load_task
from trainer.tasks._run import SubprocessRunner, TaskRunner, Verdict, VerifierError, copy_workspace

__all__ = ["TaskReport", "validate_task", "validate_tasks"]


@dataclass(slots=True)
class TaskReport:
    """One task's validation: every problem found, and what the two verifier runs gave."""

    path: Path
    problems: list[str] = field(default_factory=list)
    untouched: Verdict | None = None
    oracle: Verdict | None = None
    seconds: float = 0.0
    task: Task | None = None

    @property
    def valid(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, object]:
        def reward(verdict: Verdict | None) -> float | None:
            return None if verdict is None else verdict.reward

        return {
            "path": str(self.path),
            "id": self.task.id if self.task else self.path.name,
            "valid": self.valid,
            "problems": self.problems,
            "untouched_reward": reward(self.untouched),
            "oracle_reward": reward(self.oracle),
            "seconds": round(self.seconds, 3),
        }


def _verdict_problem(verdict: Verdict, what: str) -> str | None:
    if verdict.timed_out:
        return f"the verifier timed out on {what}"
    return None


def _check_untouched(task: Task, runner: TaskRunner, scratch: Path, report: TaskReport) -> None:
    workspace = copy_workspace(task, scratch / "untouched")
    verdict = report.untouched = runner.verify(task, workspace)
    problem = _verdict_problem(verdict, "the untouched workspace")
    if problem:
        report.problems.append(f"{task.root}: {problem}")
    elif verdict.success:
        report.problems.append(
            f"{task.root}: the untouched workspace already passes (reward {verdict.reward:g}): "
            "there is nothing to do"
        )


def _check_oracle(task: Task, runner: TaskRunner, scratch: Path, report: TaskReport) -> None:
    workspace = copy_workspace(task, scratch / "oracle")
    solved = runner.solve(task, workspace)
    if solved.timed_out or solved.exit_code != 0:
        state = "timed out" if solved.timed_out else f"exited {solved.exit_code}"
        report.problems.append(f"{task.solve_script}: the oracle {state}: {solved.output[-300:]}")
        return
    verdict = report.oracle = runner.verify(task, workspace)
    problem = _verdict_problem(verdict, "the oracle's workspace")
    if problem:
        report.problems.append(f"{task.root}: {problem}")
    elif not verdict.success:
        report.problems.append(
            f"{task.root}: the oracle does not pass (reward {verdict.reward:g}): "
            f"{verdict.output[-300:]}"
        )


def validate_task(path: Path, runner: TaskRunner | None = None) -> TaskReport:
    """Load the task at ``path`` and run both checks; never raises for a bad task."""
    started = time.monotonic()
    report = TaskReport(path)
    try:
        task = report.task = load_task(path)
    except TaskDirError as bad:
        report.problems += bad.problems
        report.seconds = time.monotonic() - started
        return report
    if not task.has_oracle:
        report.problems.append(f"{task.root}: missing solution/solve.sh (the oracle)")
        report.seconds = time.monotonic() - started
        return report
    chosen = runner or SubprocessRunner()
    scratch = Path(tempfile.mkdtemp(prefix="safeagents-validate-"))
    try:
        for check in (_check_untouched, _check_oracle):
            try:
                check(task, chosen, scratch, report)
            except VerifierError as problem:
                report.problems.append(f"{task.root}: {problem}")
            except OSError as problem:
                report.problems.append(f"{task.root}: {problem}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report.seconds = time.monotonic() - started
    return report


def validate_tasks(
    paths: Iterable[str | Path],
    runner: TaskRunner | None = None,
    *,
    jobs: int = 1,
    on_report: Callable[[TaskReport], None] | None = None,
) -> Sequence[TaskReport]:
    """Every task under ``paths`` (task directories or datasets), ``jobs`` at a time; a path
    with no task in it is a report with that problem. Reports keep the order of ``paths``."""
    found: list[Path] = []
    missing: list[TaskReport] = []
    for path in paths:
        try:
            tasks = find_task_dirs(path)
        except TaskDirError as bad:
            missing.append(TaskReport(Path(path), bad.problems))
            continue
        if not tasks:
            state = "no tasks in it" if Path(path).is_dir() else "not a directory"
            missing.append(TaskReport(Path(path), [f"{path}: {state}"]))
        found += tasks

    def one(path: Path) -> TaskReport:
        report = validate_task(path, runner)
        if on_report is not None:
            on_report(report)
        return report

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        reports = list(pool.map(one, found))
    return missing + reports
