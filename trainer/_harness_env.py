"""An environment that runs a real agent harness (pi, opencode, hermes, codex, claude) on the
tasks of a directory, through the proxy, and scores each rollout with the task's verifier.

Tasks are in Harbor's format (:mod:`trainer.tasks`): ``task.toml``, ``instruction.md`` (the
prompt), ``environment/`` (the workspace, copied fresh for every rollout), ``tests/test.sh``
(the verifier, run by a :class:`~trainer.tasks.TaskRunner` after the agent exits, from a copy
outside the workspace so the agent never sees or edits it). The reward is what the verifier
wrote (``reward.json`` or ``reward.txt``); a verifier that wrote none is the task's bug and
leaves the rollout unscored. Held-out tasks (``[metadata.safeagents] held_out``) are refused
unless ``held_out=True`` (evaluation).

Before the agent starts, the rollout's session is opened on the proxy
(``PUT /safeagents/v1/sessions/{id}`` with the workspace as ``cwd``) so that path rules such
as ``tests/**`` resolve against the real workspace. Workspaces live under ``workspaces_dir``,
which should not be under ``/tmp``: the bundled rules treat ``/tmp`` as scratch space.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from safeagents.scripted import HARNESSES, HarnessRun, prepare_launch, run_harness
from trainer._environment import Endpoint, Task
from trainer.sandbox import remove_tree
from trainer.tasks import SubprocessRunner, TaskDirError, TaskRunner, copy_workspace, load_tasks

__all__ = ["ADMIN_TOKEN_ENV", "HarnessEnvironment", "default_workspaces_dir"]

logger = logging.getLogger("safeagents.trainer")
ADMIN_TOKEN_ENV = "SAFEAGENTS_ADMIN_TOKEN"
_SCRATCH_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def default_workspaces_dir() -> Path:
    """``$XDG_CACHE_HOME/safeagents/rollouts`` (``~/.cache/...`` without it)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "safeagents" / "rollouts"


def _under_scratch(path: Path) -> bool:
    resolved = str(path.resolve())
    return any(resolved == root or resolved.startswith(root + "/") for root in _SCRATCH_ROOTS)


class HarnessEnvironment:
    """Rollouts of a real harness on directory tasks; see the module docstring."""

    def __init__(
        self,
        *,
        harness: str,
        tasks_dir: str | Path,
        timeout: float = 600.0,
        keep_workspaces: bool = False,
        verify_timeout: float | None = None,
        workspaces_dir: str | Path | None = None,
        admin_token: str | None = None,
        runner: TaskRunner | None = None,
        held_out: bool = False,
    ) -> None:
        if harness not in HARNESSES:
            raise ValueError(f"unknown harness {harness!r}; known: {', '.join(HARNESSES)}")
        self.harness = harness
        self.timeout = timeout
        self.runner = runner or SubprocessRunner(verify_timeout=verify_timeout)
        self.keep_workspaces = keep_workspaces
        self.workspaces_dir = Path(workspaces_dir or default_workspaces_dir()).absolute()
        self.admin_token = admin_token or os.environ.get(ADMIN_TOKEN_ENV) or None
        if _under_scratch(self.workspaces_dir):
            logger.warning(
                "rollout workspaces in %s are under a scratch directory, where the bundled "
                "rules allow deleting tests; pick another workspaces_dir",
                self.workspaces_dir,
            )
        loaded = load_tasks(tasks_dir)
        chosen = [task for task in loaded if held_out or not task.held_out]
        if not chosen:
            raise TaskDirError([f"{tasks_dir}: every task is held out (for evaluation only)"])
        if len(chosen) < len(loaded):
            logger.info("%d held-out tasks left out of training", len(loaded) - len(chosen))
        self._task_dirs = {task.id: task for task in chosen}
        self._tasks = [
            Task(id=task.id, prompt=task.instruction, data={"path": str(task.root)})
            for task in chosen
        ]

    def tasks(self) -> Sequence[Task]:
        return self._tasks

    async def rollout(self, task: Task, endpoint: Endpoint) -> Mapping[str, Any]:
        """Copy the workspace, open the session, run the harness, then the verifier."""
        spec = self._task_dirs.get(task.id)
        if spec is None:
            raise KeyError(f"task {task.id!r} is not one of this environment's")
        self.workspaces_dir.mkdir(parents=True, exist_ok=True)
        prefix = f"{_UNSAFE.sub('_', task.id)[:40]}-"
        root = Path(tempfile.mkdtemp(prefix=prefix, dir=self.workspaces_dir))
        try:
            workspace = root / "workspace"
            await asyncio.to_thread(copy_workspace, spec, workspace)
            await self._open_session(endpoint, workspace)
            run = await asyncio.to_thread(self._run_agent, task, endpoint, root)
            if run.timed_out or run.returncode != 0:
                logger.info(
                    "rollout %s: %s %s (exit %s): %s",
                    endpoint.session_id,
                    self.harness,
                    "timed out" if run.timed_out else "failed",
                    run.returncode,
                    run.output[-500:],
                )
            verdict = await asyncio.to_thread(self.runner.verify, spec, workspace)
        finally:
            if self.keep_workspaces:
                logger.info("rollout %s kept in %s", endpoint.session_id, root)
            else:
                try:
                    await asyncio.to_thread(remove_tree, root)
                except OSError as problem:
                    logger.warning(
                        "rollout %s: cannot remove %s: %s", endpoint.session_id, root, problem
                    )
        return {
            "success": verdict.success,
            "reward": verdict.reward,
            "harness_exit": run.returncode,
            "timed_out": run.timed_out,
            "verify_exit": verdict.exit_code,
            "verify_timed_out": verdict.timed_out,
            "reward_source": verdict.source,
        }

    def _run_agent(self, task: Task, endpoint: Endpoint, root: Path) -> HarnessRun:
        launch = prepare_launch(
            self.harness,
            endpoint.base_url,
            endpoint.model,
            root / "workspace",
            task.prompt,
            root / "state",
            api_key=endpoint.api_key,
            thinking=endpoint.thinking,
        )
        return run_harness(launch, timeout=self.timeout)

    async def _open_session(self, endpoint: Endpoint, workspace: Path) -> None:
        """Tell the proxy where the session's paths resolve (its ``cwd``) before it starts."""
        url = f"{admin_url(endpoint)}/sessions/{endpoint.session_id}"
        headers = {"authorization": f"Bearer {self.admin_token}"} if self.admin_token else {}
        body = {"cwd": str(workspace.resolve()), "harness": self.harness}
        async with httpx.AsyncClient(timeout=30.0) as client:
            response = await client.put(url, json=body, headers=headers)
        if response.status_code >= 400:
            raise RuntimeError(
                f"opening session {endpoint.session_id} on the proxy: "
                f"{response.status_code} {response.text[:500]}"
            )


def admin_url(endpoint: Endpoint) -> str:
    """The proxy's admin API for ``endpoint``, whose base URL is ``{proxy}/s/{id}/v1``."""
    marker = f"/s/{endpoint.session_id}/"
    proxy, found, _ = endpoint.base_url.rpartition(marker)
    if not found:
        raise ValueError(
            f"endpoint base URL {endpoint.base_url!r} does not name session "
            f"{endpoint.session_id!r} as /s/{endpoint.session_id}/v1"
        )
    return f"{proxy}/safeagents/v1"
