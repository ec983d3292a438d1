"""Task directories on disk, and their verifiers: the parts of a harness environment that do
not involve the agent (see :mod:`trainer._harness_env` for the layout).
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "REWARD_FILE",
    "TaskDir",
    "TaskDirError",
    "Verdict",
    "VerifierError",
    "load_task_dirs",
    "parse_reward",
    "run_verifier",
    "verifier_env",
]

INSTRUCTION = "instruction.md"
WORKSPACE = "workspace"
VERIFY = "verify"
REWARD_FILE = "reward.json"
_OUTPUT_TAIL = 4000

RewardSource = Literal["reward.json", "stdout", "exit code"]


class TaskDirError(ValueError):
    """A tasks directory with problems; ``problems`` lists every one of them."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("bad tasks directory:\n" + "\n".join(f"  {p}" for p in self.problems))


class VerifierError(RuntimeError):
    """A verifier reported its reward in a malformed way (a bug of the task, not the agent)."""


@dataclass(frozen=True, slots=True)
class TaskDir:
    """One task: its id (the directory name), prompt, pristine workspace and verifier."""

    id: str
    root: Path
    prompt: str

    @property
    def workspace(self) -> Path:
        return self.root / WORKSPACE

    @property
    def verify(self) -> Path:
        return self.root / VERIFY


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a verifier said about one rollout's workspace."""

    success: bool
    reward: float
    exit_code: int | None
    """``None`` when the verifier timed out."""
    timed_out: bool
    source: RewardSource
    output: str = ""


def _task_problems(root: Path) -> list[str]:
    problems = []
    instruction, workspace, verify = root / INSTRUCTION, root / WORKSPACE, root / VERIFY
    if not instruction.is_file():
        problems.append(f"{root}: missing {INSTRUCTION} (the prompt)")
    elif not instruction.read_text(encoding="utf-8").strip():
        problems.append(f"{instruction}: empty prompt")
    if not workspace.is_dir():
        problems.append(f"{root}: missing {WORKSPACE}/ (copied for every rollout)")
    if not verify.is_file():
        problems.append(f"{root}: missing {VERIFY} (the verifier; exit 0 = success)")
    elif not os.access(verify, os.X_OK):
        problems.append(f"{verify}: not executable (chmod +x it)")
    return problems


def load_task_dirs(tasks_dir: str | Path) -> list[TaskDir]:
    """Every task under ``tasks_dir`` (sorted by id; dot-directories are skipped), or
    :class:`TaskDirError` listing every problem found."""
    base = Path(tasks_dir)
    if not base.is_dir():
        raise TaskDirError([f"{base}: not a directory"])
    roots = sorted(
        entry for entry in base.iterdir() if entry.is_dir() and not entry.name.startswith(".")
    )
    if not roots:
        raise TaskDirError([f"{base}: no task directories (each needs {INSTRUCTION}, ...)"])
    problems = [problem for root in roots for problem in _task_problems(root)]
    if problems:
        raise TaskDirError(problems)
    return [
        TaskDir(root.name, root.resolve(), (root / INSTRUCTION).read_text(encoding="utf-8"))
        for root in roots
    ]


def _reward_value(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise VerifierError(f"{where}: the reward must be a finite number, got {value!r}")
    return float(value)


def _last_line_reward(stdout: str) -> float | None:
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None
    try:
        document = json.loads(lines[-1])
    except ValueError:
        return None
    if not isinstance(document, dict) or "reward" not in document:
        return None
    return _reward_value(document["reward"], "the verifier's last output line")


def parse_reward(
    exit_code: int | None, stdout: str, reward_file: Path
) -> tuple[float, RewardSource]:
    """The reward a verifier gave: ``reward.json`` it wrote, else a last stdout line that is a
    JSON object with ``reward``, else 1.0 for exit code 0 and 0.0 otherwise."""
    if reward_file.is_file():
        try:
            document = json.loads(reward_file.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as problem:
            raise VerifierError(f"{reward_file}: not JSON: {problem}") from problem
        if not isinstance(document, dict) or "reward" not in document:
            raise VerifierError(f'{reward_file}: expected {{"reward": NUMBER}}, got {document!r}')
        return _reward_value(document["reward"], str(reward_file)), "reward.json"
    from_stdout = _last_line_reward(stdout)
    if from_stdout is not None:
        return from_stdout, "stdout"
    return (1.0 if exit_code == 0 else 0.0), "exit code"


def verifier_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with this Python's bin dir first on ``$PATH``."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(extra or {})
    return env


def _clear_reward_file(path: Path) -> None:
    """Drop a ``reward.json`` the agent left, so only the verifier's own counts."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def run_verifier(
    verify: Path, workspace: Path, timeout: float, env: Mapping[str, str] | None = None
) -> Verdict:
    """Run ``verify`` in ``workspace``; a verifier that times out is a failure (reward 0)."""
    reward_file = workspace / REWARD_FILE
    _clear_reward_file(reward_file)
    process = subprocess.Popen(
        [str(verify)],
        cwd=workspace,
        env=dict(env) if env is not None else verifier_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process.pid)
        stdout, stderr = process.communicate()
        return Verdict(False, 0.0, None, True, "exit code", _tail(stdout, stderr))
    _kill_group(process.pid)  # whatever the verifier left running
    reward, source = parse_reward(process.returncode, stdout, reward_file)
    code = process.returncode
    return Verdict(code == 0, reward, code, False, source, _tail(stdout, stderr))


def _tail(stdout: str, stderr: str) -> str:
    return f"{stdout}\n{stderr}".strip()[-_OUTPUT_TAIL:]


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
