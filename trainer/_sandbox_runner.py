"""A :class:`~trainer.tasks.TaskRunner` that runs a task's oracle and verifier inside a
sandbox, on the workspace it is given (``tasks validate --sandbox``, ``HarnessEnvironment``).

The workspace is at ``workdir`` inside; the oracle gets ``solution/`` read-only at
``/solution``, the verifier ``tests/`` read-only at ``/tests`` and a fresh ``/logs/verifier``,
as in Harbor. Neither has a network. Each sees only its own directory of the task. The
``local`` backend binds the workspace itself; the ``harbor`` backend gets a copy, and what
the oracle left there is copied back.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

from trainer.sandbox import (
    VERIFIER_LIMITS,
    HarborBackend,
    HarborSandbox,
    Limits,
    LocalBackend,
    Sandbox,
    SandboxError,
    remove_tree,
)
from trainer.tasks import (
    LOGS_ENV,
    SOLUTION_ENV,
    TESTS_ENV,
    ScriptRun,
    Task,
    Verdict,
    VerifierError,
    read_reward,
)

__all__ = ["LOGS", "SOLUTION", "TESTS", "SandboxRunner", "run_verifier", "script_env"]

TESTS = "/tests"
SOLUTION = "/solution"
LOGS = "/logs/verifier"
_TAIL = 4000


def script_env(extra: Mapping[str, str]) -> dict[str, str]:
    """A task script's environment inside a sandbox: this Python first on ``$PATH``."""
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin"])
    return {"PATH": path, "HOME": "/tmp", "LANG": "C.UTF-8", **extra}


class SandboxRunner:
    """Runs ``solve.sh`` and ``test.sh`` in a :class:`LocalBackend` or :class:`HarborBackend`
    sandbox."""

    def __init__(
        self,
        backend: LocalBackend | HarborBackend | None = None,
        *,
        workdir: str = "/workspace",
        solve_limits: Limits = VERIFIER_LIMITS,
        verify_timeout: float | None = None,
    ) -> None:
        self.backend = backend or LocalBackend()
        self.workdir = workdir
        self.solve_limits = solve_limits
        self.verify_timeout = verify_timeout
        """``None``: the task's ``[verifier] timeout_sec``."""

    @asynccontextmanager
    async def _sandbox(self, workspace: Path, *, keep: bool) -> AsyncIterator[Sandbox]:
        """A sandbox over ``workspace``; with ``keep``, what it leaves there is kept."""
        if isinstance(self.backend, LocalBackend):
            yield self.backend.attach(workspace, workdir=self.workdir)
            return
        sandbox = await self.backend.create(
            workspace, workdir=self.workdir, rollout_id=f"validate-{workspace.name}"
        )
        try:
            yield sandbox
            if keep and isinstance(sandbox, HarborSandbox):
                await asyncio.to_thread(_empty, workspace)
                await sandbox.download(self.workdir, workspace)
        finally:
            await sandbox.close()

    def solve(self, task: Task, workspace: Path) -> ScriptRun:
        env = script_env({**task.config.solution.env, SOLUTION_ENV: SOLUTION})
        script = f"{SOLUTION}/{task.solve_script.relative_to(task.solution_dir).as_posix()}"

        async def run() -> ScriptRun:
            async with self._sandbox(workspace, keep=True) as sandbox:
                await sandbox.add(task.solution_dir, SOLUTION)
                done = await sandbox.exec(["bash", script], env=env, limits=self.solve_limits)
            return ScriptRun(done.returncode, done.timed_out, done.output[-_TAIL:])

        try:
            return asyncio.run(run())
        except SandboxError as problem:  # the task cannot be judged: a problem, not a crash
            raise VerifierError(f"{task.id}: the oracle's sandbox failed: {problem}") from None

    def verify(self, task: Task, workspace: Path) -> Verdict:
        timeout = self.verify_timeout or task.config.verifier.timeout_sec
        limits = Limits(wall_seconds=timeout, agent_steps=None)

        async def run(logs: Path) -> Verdict:
            env = script_env({**task.config.verifier.env, TESTS_ENV: TESTS, LOGS_ENV: LOGS})
            async with self._sandbox(workspace, keep=False) as sandbox:
                return await run_verifier(
                    sandbox, task.tests_dir, task.test_script, logs, env, limits
                )

        with tempfile.TemporaryDirectory(prefix="safeagents-verifier-") as logs:
            (Path(logs) / "verifier").mkdir()
            try:
                return asyncio.run(run(Path(logs)))
            except VerifierError as problem:
                raise VerifierError(f"{task.id}: {problem}") from None
            except SandboxError as problem:
                raise VerifierError(
                    f"{task.id}: the verifier's sandbox failed: {problem}"
                ) from None


def _empty(directory: Path) -> None:
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            remove_tree(entry)
        else:
            entry.unlink()


async def run_verifier(
    sandbox: Sandbox,
    tests_dir: Path,
    test_script: Path,
    logs: Path,
    env: Mapping[str, str],
    limits: Limits,
) -> Verdict:
    """``test_script`` (in ``tests_dir``, added read-only at ``/tests``) run in ``sandbox``
    with ``logs`` (an empty directory with ``verifier/`` in it) at ``/logs``; its reward is
    read back through the sandbox. A verifier that wrote none raises :class:`VerifierError`."""
    await sandbox.add(tests_dir, TESTS)
    await sandbox.add(logs, "/logs", writable=True)
    script = f"{TESTS}/{test_script.relative_to(tests_dir).as_posix()}"
    done = await sandbox.exec(["bash", script], env=env, limits=limits)
    output = done.output[-_TAIL:]
    if done.timed_out:
        return Verdict(False, 0.0, None, True, "none", output)
    with tempfile.TemporaryDirectory(prefix="reward-") as copied:
        for name in ("reward.json", "reward.txt"):  # read through the sandbox: no links out
            content = await sandbox.read(f"{LOGS}/{name}")
            if content is not None:
                (Path(copied) / name).write_bytes(content)
        try:
            reward, source = read_reward(Path(copied))
        except VerifierError as problem:
            raise VerifierError(f"{problem}; output: {output[-500:]}") from None
    return Verdict(reward >= 1.0, reward, done.returncode, False, source, output)
