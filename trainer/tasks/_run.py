"""Running a task's scripts on a workspace: the oracle (``solution/solve.sh``) and the verifier
(``tests/test.sh``), and reading the reward the verifier wrote.

:class:`TaskRunner` is what a sandbox backend implements; :class:`SubprocessRunner`, the
default, runs each script as a plain subprocess (its own process group, killed at the end)
with a private copy of ``tests/`` or ``solution/`` outside the workspace. Scripts find their
files through the environment, as they would at Harbor's fixed paths:

- ``SAFEAGENTS_TESTS_DIR`` (Harbor: ``/tests``) and ``SAFEAGENTS_SOLUTION_DIR``
  (``/solution``); a script can also use its own directory, ``$(dirname "$0")``.
- ``SAFEAGENTS_VERIFIER_LOGS`` (``/logs/verifier``): where the verifier writes
  ``reward.json`` (``{"reward": x}``, or one numeric key) or ``reward.txt`` (a number). As in
  Harbor, JSON wins and the exit code is not the verdict: no reward file is the task's bug.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from trainer.tasks._load import WORKSPACE_EXCLUDED, Task

__all__ = [
    "LOGS_ENV",
    "SOLUTION_ENV",
    "TESTS_ENV",
    "RewardSource",
    "ScriptRun",
    "SubprocessRunner",
    "TaskRunner",
    "Verdict",
    "VerifierError",
    "copy_workspace",
    "read_reward",
    "run_script",
    "verifier_env",
]

TESTS_ENV = "SAFEAGENTS_TESTS_DIR"
SOLUTION_ENV = "SAFEAGENTS_SOLUTION_DIR"
LOGS_ENV = "SAFEAGENTS_VERIFIER_LOGS"
_OUTPUT_TAIL = 4000

RewardSource = Literal["reward.json", "reward.txt", "none"]


class VerifierError(RuntimeError):
    """A verifier reported its reward in a malformed way, or not at all (the task's bug)."""


@dataclass(frozen=True, slots=True)
class ScriptRun:
    """How a script ended: its exit code (``None`` when it timed out) and output tail."""

    exit_code: int | None
    timed_out: bool
    output: str = ""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a verifier said about one workspace: ``success`` is full marks (reward >= 1)."""

    success: bool
    reward: float
    exit_code: int | None
    """``None`` when the verifier timed out (a failure, reward 0)."""
    timed_out: bool
    source: RewardSource
    output: str = ""


class TaskRunner(Protocol):
    """Runs a task's oracle and verifier on a workspace (a sandbox backend implements it)."""

    def solve(self, task: Task, workspace: Path) -> ScriptRun:
        """Run ``solution/solve.sh`` in ``workspace`` (which it changes)."""
        ...

    def verify(self, task: Task, workspace: Path) -> Verdict:
        """Run ``tests/test.sh`` in ``workspace`` and read the reward it wrote."""
        ...


def _reward_value(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise VerifierError(f"{where}: the reward must be a finite number, got {value!r}")
    return float(value)


def read_reward(logs: Path) -> tuple[float, RewardSource]:
    """The reward in ``logs/reward.json`` (the ``reward`` key, or the only key, or a bare
    number), else ``logs/reward.txt``; :class:`VerifierError` when neither holds one."""
    as_json, as_text = logs / "reward.json", logs / "reward.txt"
    if as_json.is_file():
        try:
            document = json.loads(as_json.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as problem:
            raise VerifierError(f"reward.json: not JSON: {problem}") from problem
        if isinstance(document, dict):
            if "reward" in document:
                document = document["reward"]
            elif len(document) == 1:
                (document,) = document.values()
            else:
                raise VerifierError(
                    f"reward.json: expected a 'reward' key or a single key, got {sorted(document)}"
                )
        return _reward_value(document, "reward.json"), "reward.json"
    if as_text.is_file():
        text = as_text.read_text(encoding="utf-8", errors="replace").strip()
        try:
            value = float(text)
        except ValueError:
            raise VerifierError(f"reward.txt: not a number: {text[:80]!r}") from None
        return _reward_value(value, "reward.txt"), "reward.txt"
    raise VerifierError(f"the verifier wrote no reward (reward.json or reward.txt in ${LOGS_ENV})")


def verifier_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with this Python's bin dir first on ``$PATH``."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(extra or {})
    return env


def copy_workspace(task: Task, destination: Path) -> Path:
    """A fresh copy of the task's workspace at ``destination`` (which must not exist)."""
    source = task.workspace
    ignore = shutil.ignore_patterns(*WORKSPACE_EXCLUDED) if source == task.environment_dir else None
    shutil.copytree(source, destination, symlinks=True, ignore=ignore)
    return destination


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _tail(stdout: str) -> str:
    return stdout.strip()[-_OUTPUT_TAIL:]


def run_script(script: Path, workspace: Path, env: Mapping[str, str], timeout: float) -> ScriptRun:
    """``bash script`` in ``workspace``; every process it started is killed at the end."""
    process = subprocess.Popen(
        ["bash", str(script)],
        cwd=workspace,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        stdout, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process.pid)
        stdout, _ = process.communicate()
        return ScriptRun(None, True, _tail(stdout))
    _kill_group(process.pid)
    return ScriptRun(process.returncode, False, _tail(stdout))


class SubprocessRunner:
    """The default :class:`TaskRunner`: plain subprocesses, no isolation beyond a private
    copy of the scripts' directory (see the module docstring)."""

    def __init__(self, *, solve_timeout: float = 600.0, verify_timeout: float | None = None):
        self.solve_timeout = solve_timeout
        self.verify_timeout = verify_timeout
        """``None``: the task's ``[verifier] timeout_sec``."""

    def solve(self, task: Task, workspace: Path) -> ScriptRun:
        with tempfile.TemporaryDirectory(prefix="safeagents-solution-") as scratch:
            solution = Path(scratch) / "solution"
            shutil.copytree(task.solution_dir, solution, symlinks=True)
            env = {**task.config.solution.env, SOLUTION_ENV: str(solution)}
            return run_script(
                solution / "solve.sh", workspace, verifier_env(env), self.solve_timeout
            )

    def verify(self, task: Task, workspace: Path) -> Verdict:
        timeout = self.verify_timeout or task.config.verifier.timeout_sec
        with tempfile.TemporaryDirectory(prefix="safeagents-verifier-") as scratch:
            tests, logs = Path(scratch) / "tests", Path(scratch) / "logs" / "verifier"
            shutil.copytree(task.tests_dir, tests, symlinks=True)
            logs.mkdir(parents=True)
            env = {**task.config.verifier.env, TESTS_ENV: str(tests), LOGS_ENV: str(logs)}
            run = run_script(tests / "test.sh", workspace, verifier_env(env), timeout)
            if run.timed_out:
                return Verdict(False, 0.0, None, True, "none", run.output)
            try:
                reward, source = read_reward(logs)
            except VerifierError as problem:
                raise VerifierError(f"{task.id}: {problem}; output: {run.output[-500:]}") from None
        return Verdict(reward >= 1.0, reward, run.exit_code, False, source, run.output)
