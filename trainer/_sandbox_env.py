"""An environment that runs a real harness inside a sandbox, one sandbox per rollout.

For each rollout: a sandbox with a private copy of the task's workspace at ``workdir``; the
proxy session opened with ``workdir`` as its ``cwd`` (the path the agent sees); the harness
run inside, its only way out the proxy as its own ``/s/{id}`` session, under the agent
:class:`~trainer.sandbox.Limits` (30 model requests, 20 minutes by default). Only after the
agent and everything it started are gone are the hidden tests added (read-only, at
``/tests``) and the verifier run inside, with no network, writing its reward to
``/logs/verifier`` (``reward.json`` or ``reward.txt``, as in Harbor).

The outcome carries the task id. A harness that crashed or timed out, a sandbox that failed
and a verifier that wrote no reward leave the rollout unscored: the outcome has no
``success`` or ``reward``, only ``failure`` (``timeout``, ``crash``, ``sandbox`` or
``verifier``, which the rollout scheduler counts by) and ``unscored`` (the reason). Reaching
the step limit ends the agent normally and its workspace is verified.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

from safeagents.scripted import HARNESSES, find_harness, harness_root, prepare_launch
from trainer._curriculum import curriculum_weights
from trainer._environment import Endpoint, Task
from trainer._harness_env import ADMIN_TOKEN_ENV, admin_url
from trainer._sandbox_runner import LOGS, TESTS, run_verifier, script_env
from trainer.sandbox import (
    AGENT_LIMITS,
    VERIFIER_LIMITS,
    ExecResult,
    HarborBackend,
    Limits,
    LocalBackend,
    ProxyAccess,
    Sandbox,
    SandboxBackend,
    SandboxError,
    make_backend,
    remove_tree,
)
from trainer.tasks import LOGS_ENV, TESTS_ENV, TaskDirError, Verdict, VerifierError, load_tasks

__all__ = ["SandboxEnvironment", "SandboxTask"]

logger = logging.getLogger("safeagents.trainer")
_TAIL = 2000


class SandboxTask(Protocol):
    """What a rollout needs of a task (Harbor's layout: ``tests/test.sh`` is the verifier)."""

    @property
    def id(self) -> str: ...
    @property
    def instruction(self) -> str: ...
    @property
    def workspace(self) -> Path: ...
    @property
    def tests_dir(self) -> Path: ...
    @property
    def test_script(self) -> Path: ...


class _Unscored(Exception):
    """The rollout cannot be scored: ``kind`` is the failure, the message says why."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind


class SandboxEnvironment:
    """Rollouts of ``harness`` on ``tasks``, each in its own sandbox (module docstring)."""

    def __init__(
        self,
        *,
        harness: str,
        tasks: Sequence[SandboxTask] = (),
        tasks_dir: str | Path | None = None,
        held_out: bool = False,
        backend: SandboxBackend | str | Mapping[str, Any] | None = None,
        workdir: str = "/workspace",
        limits: Limits | Mapping[str, Any] = AGENT_LIMITS,
        verify_limits: Limits | Mapping[str, Any] = VERIFIER_LIMITS,
        state_dir: str | Path | None = None,
        admin_token: str | None = None,
        curriculum: Mapping[str, int] | None = None,
    ) -> None:
        if harness not in HARNESSES:
            raise ValueError(f"unknown harness {harness!r}; known: {', '.join(HARNESSES)}")
        binary = find_harness(harness)
        if binary is None:
            raise FileNotFoundError(f"{harness} is not installed (run scripts/install-harnesses)")
        self.harness = harness
        self.binary = binary
        self.backend = make_backend(backend)
        if isinstance(self.backend, (LocalBackend, HarborBackend)):
            self.backend.expose(_install_dir(binary))
        self.workdir = workdir
        self.limits = limits if isinstance(limits, Limits) else Limits(**limits)
        self.verify_limits = (
            verify_limits if isinstance(verify_limits, Limits) else Limits(**verify_limits)
        )
        self.state_dir = Path(state_dir or tempfile.mkdtemp(prefix="safeagents-harness-state-"))
        self.admin_token = admin_token or os.environ.get(ADMIN_TOKEN_ENV) or None
        if tasks_dir is not None:
            loaded = load_tasks(tasks_dir)
            tasks = [*tasks, *(task for task in loaded if held_out or not task.held_out)]
        if not tasks:
            raise TaskDirError([f"{tasks_dir}: no tasks to train on (held-out ones are left out)"])
        self._specs = {task.id: task for task in tasks}
        if len(self._specs) != len(tasks):
            raise ValueError("task ids must be unique")
        exposes = getattr(self.backend, "exposes", None)
        for task in tasks:
            for hidden in (task.tests_dir, task.test_script):
                if exposes is not None and exposes(hidden):
                    raise SandboxError(f"{task.id}: {hidden} would be visible in the sandbox")
        weights = curriculum_weights(curriculum)
        self._tasks = [
            Task(id=task.id, prompt=task.instruction, data=_task_data(task, weights))
            for task in tasks
        ]

    def tasks(self) -> Sequence[Task]:
        return self._tasks

    async def rollout(self, task: Task, endpoint: Endpoint) -> Mapping[str, Any]:
        """Run the harness in a fresh sandbox, then the hidden tests; see the module docstring."""
        spec = self._specs.get(task.id)
        if spec is None:
            raise KeyError(f"task {task.id!r} is not one of this environment's")
        timings: dict[str, float] = {}
        facts: dict[str, Any] = {"task_id": task.id}
        started = time.monotonic()
        try:
            proxy, inside_url = _proxy_access(endpoint)
            await self._open_session(endpoint)
            sandbox = await self.backend.create(
                spec.workspace, workdir=self.workdir, rollout_id=endpoint.session_id
            )
        except (SandboxError, httpx.HTTPError, RuntimeError, ValueError, OSError) as problem:
            return {**facts, "failure": "sandbox", "unscored": f"sandbox: {problem}"}
        timings["create"] = time.monotonic() - started
        state = Path(tempfile.mkdtemp(prefix="rollout-", dir=self._state_root()))
        try:
            verdict = await self._agent_then_verifier(
                sandbox, spec, endpoint, proxy, inside_url, state, facts, timings
            )
            facts |= {
                "success": verdict.success,
                "reward": verdict.reward,
                "reward_source": verdict.source,
                "verify_exit": verdict.exit_code,
                "verify_timed_out": verdict.timed_out,
            }
        except _Unscored as reason:
            facts |= {"failure": reason.kind, "unscored": str(reason)}
            logger.info("rollout %s unscored: %s", endpoint.session_id, reason)
        finally:
            closing = time.monotonic()
            await sandbox.close()
            await asyncio.to_thread(remove_tree, state)
            timings["close"] = time.monotonic() - closing
        return {**facts, "timings": timings}

    def _state_root(self) -> Path:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        return self.state_dir

    async def _agent_then_verifier(
        self,
        sandbox: Sandbox,
        spec: SandboxTask,
        endpoint: Endpoint,
        proxy: ProxyAccess,
        inside_url: str,
        state: Path,
        facts: dict[str, Any],
        timings: dict[str, float],
    ) -> Verdict:
        launch = prepare_launch(
            self.harness,
            inside_url,
            endpoint.model,
            Path(self.workdir),
            spec.instruction,
            state,
            binary=self.binary,
            api_key=endpoint.api_key,
        )
        await sandbox.add(state, str(state), writable=True)
        began = time.monotonic()
        agent = await _exec(sandbox, launch.argv, launch.env, self.limits, proxy)
        timings["agent"] = time.monotonic() - began
        facts |= {"harness_exit": agent.returncode, "steps": agent.steps}
        facts |= {"step_limit": agent.step_limit, "refused": list(agent.refused)}
        if agent.timed_out:
            raise _Unscored("timeout", f"the harness timed out after {self.limits.wall_seconds:g}s")
        if not agent.step_limit and agent.returncode != 0:
            output = agent.output[-_TAIL:]
            raise _Unscored("crash", f"the harness exited with {agent.returncode}: {output}")
        began = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="verifier-", dir=self._state_root()) as logs:
            verdict = await self._verify(sandbox, spec, Path(logs))
        timings["verify"] = time.monotonic() - began
        return verdict

    async def _verify(self, sandbox: Sandbox, spec: SandboxTask, logs: Path) -> Verdict:
        """Made after the agent is gone, ``logs`` holds nothing the agent could have left."""
        (logs / "verifier").mkdir()
        env = script_env({TESTS_ENV: TESTS, LOGS_ENV: LOGS})
        try:
            return await run_verifier(
                sandbox, spec.tests_dir, spec.test_script, logs, env, self.verify_limits
            )
        except VerifierError as problem:
            raise _Unscored("verifier", f"verifier: {problem}") from None

    async def _open_session(self, endpoint: Endpoint) -> None:
        """Tell the proxy the session's paths resolve against ``workdir`` (what the agent sees)."""
        url = f"{admin_url(endpoint)}/sessions/{endpoint.session_id}"
        headers = {"authorization": f"Bearer {self.admin_token}"} if self.admin_token else {}
        async with httpx.AsyncClient(timeout=30.0) as client:
            response = await client.put(
                url, json={"cwd": self.workdir, "harness": self.harness}, headers=headers
            )
        if response.status_code >= 400:
            raise RuntimeError(
                f"opening session {endpoint.session_id} on the proxy: "
                f"{response.status_code} {response.text[:500]}"
            )


async def _exec(
    sandbox: Sandbox,
    argv: Sequence[str],
    env: Mapping[str, str],
    limits: Limits,
    proxy: ProxyAccess | None,
) -> ExecResult:
    try:
        return await sandbox.exec(argv, env=env, limits=limits, proxy=proxy)
    except SandboxError as problem:
        raise _Unscored("sandbox", f"sandbox: {problem}") from problem


def _task_data(task: SandboxTask, weights: Mapping[str, int]) -> dict[str, Any]:
    """A Harbor task's difficulty, held-out flag and curriculum weight (hand-made tasks
    without a ``task.toml`` model count as ``unknown`` and not held out)."""
    config = getattr(task, "config", None)
    metadata = getattr(config, "metadata", None)
    difficulty = str(getattr(metadata, "difficulty", "unknown"))
    held_out = bool(getattr(task, "held_out", False))
    return {"difficulty": difficulty, "held_out": held_out, "weight": weights.get(difficulty, 1)}


def _install_dir(binary: Path) -> Path:
    """The harness's installation directory (``.harnesses/pi`` for pi), exposed read-only."""
    root = harness_root().resolve()
    absolute = binary.absolute()
    try:
        return root / absolute.relative_to(root).parts[0]
    except ValueError:
        return binary.resolve().parent


def _proxy_access(endpoint: Endpoint) -> tuple[ProxyAccess, str]:
    """Where the proxy is, and the base URL the harness is given inside the sandbox."""
    parts = urlsplit(endpoint.base_url)
    marker = f"/s/{endpoint.session_id}/v1"
    if parts.scheme != "http" or parts.hostname is None or not parts.path.startswith(marker):
        raise ValueError(
            f"endpoint {endpoint.base_url!r} is not http://HOST:PORT{marker} "
            "(the sandbox reaches the proxy over plain HTTP, as one session)"
        )
    port = parts.port or 80
    access = ProxyAccess(host=parts.hostname, port=port, session_id=endpoint.session_id)
    return access, f"http://127.0.0.1:{port}{parts.path}"
