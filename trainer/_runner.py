"""Rollouts through the proxy: ``group_size`` sessions per task, verified, their outcome
posted, then read back from the transcript store as groups.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from safeagents.protocols import Sampling
from safeagents.store import SessionRecord, Store
from trainer._advantages import Group
from trainer._environment import Endpoint, Environment, Task
from trainer._reward import RewardFunction
from trainer._rollouts import Rollout, TaskOf, read_rollout
from trainer._scheduler import (
    FAILURES,
    GroupResult,
    RolloutFailure,
    RolloutResult,
    Scheduler,
    Status,
    failure_of,
)

__all__ = ["ProxyAdmin", "ProxyAdminError", "RolloutRunner", "RolloutSummary", "StepRollouts"]

logger = logging.getLogger("safeagents.trainer")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class ProxyAdminError(RuntimeError):
    """The proxy's admin API refused or failed a call."""


class ProxyAdmin:
    """The calls the trainer makes to ``safeagents serve``'s admin API."""

    def __init__(self, admin_url: str, *, token: str | None = None, timeout: float = 30.0) -> None:
        self.admin_url = admin_url.rstrip("/")
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self._headers = headers
        self._timeout = timeout

    @property
    def guarded(self) -> bool:
        """The proxy has an admin token, so its model endpoints need a session key."""
        return bool(self._headers)

    async def _send(
        self, client: httpx.AsyncClient, method: str, url: str, **options: Any
    ) -> httpx.Response:
        """``method url``, sent again once if the server hung up without a response: a request
        written as the server drops an idle keep-alive connection never reached it, and every
        admin call is idempotent."""
        try:
            return await client.request(method, url, headers=self._headers, **options)
        except httpx.RemoteProtocolError as problem:
            logger.info("%s %s: %s; sending it again", method, url, problem)
        return await client.request(method, url, headers=self._headers, **options)

    async def session_key(self, client: httpx.AsyncClient, session_id: str) -> str:
        """The key the proxy issues for ``session_id``: the rollout's harness's API key."""
        url = f"{self.admin_url}/sessions/{session_id}/key"
        response = await self._send(client, "GET", url)
        key = self._check(response, f"getting the key of session {session_id}")["key"]
        return str(key)

    def _check(self, response: httpx.Response, what: str) -> Any:
        if response.status_code >= 400:
            try:
                message = response.json()["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = response.text[:500]
            raise ProxyAdminError(f"{what}: proxy answered {response.status_code}: {message}")
        return response.json()

    async def post_outcome(
        self, client: httpx.AsyncClient, session_id: str, outcome: Mapping[str, Any]
    ) -> None:
        url = f"{self.admin_url}/sessions/{session_id}/outcome"
        response = await self._send(client, "POST", url, json=dict(outcome))
        self._check(response, f"posting the outcome of session {session_id}")

    async def open_training_session(
        self, client: httpx.AsyncClient, session_id: str, sampling: Mapping[str, Any]
    ) -> None:
        """Make ``session_id`` a training session: the proxy enforces ``sampling`` on it."""
        url = f"{self.admin_url}/sessions/{session_id}"
        response = await self._send(client, "PUT", url, json={"sampling": dict(sampling)})
        self._check(response, f"opening training session {session_id}")

    def set_alias(self, harness: str, model: str) -> None:
        """Point the proxy's model alias for ``harness`` at ``model``."""
        response = httpx.put(
            f"{self.admin_url}/aliases/{harness}",
            json={"model": model},
            headers=self._headers,
            timeout=self._timeout,
        )
        self._check(response, f"pointing the alias of {harness} at {model}")


@dataclass(frozen=True, slots=True)
class RolloutSummary:
    """The counts both training paths report a round of rollouts by."""

    groups: int
    rollouts: int
    """Every rollout launched, the failed ones included."""
    read: int
    """Rollouts read back from the store."""
    unscored: int
    scored: int
    reward_sum: float
    successes: int
    """Scored rollouts the verifier called a success."""
    hacks: int
    tool_calls: int


@dataclass(slots=True)
class StepRollouts:
    """What one step's rollouts gave: full or partial groups, and what went wrong."""

    groups: list[Group] = field(default_factory=list)
    rollouts: list[Rollout] = field(default_factory=list)
    failed: int = 0
    """Rollouts whose agent or verifier raised, or that never reached the proxy."""

    timed_out_groups: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    """Rollouts left unscored by a failure, by kind (``crash``, ``timeout``, ``late``…)."""

    @property
    def unscored(self) -> int:
        return self.failed + sum(not rollout.scored for rollout in self.rollouts)

    def add(self, released: GroupResult) -> None:
        """Add a group released by the scheduler (its missing rollouts count as failed)."""
        group = released.group
        self.groups.append(group)
        self.rollouts.extend(group.rollouts)
        self.failed += released.missing
        self.timed_out_groups += released.timed_out
        self.failures.update(r.status for r in released.results if r.status in FAILURES)
        cut = released.expected - len(released.results)
        if cut:
            self.failures["late"] += cut

    def summary(self) -> RolloutSummary:
        rollouts = self.rollouts
        rewards = [rollout.reward for rollout in rollouts if rollout.reward is not None]
        return RolloutSummary(
            groups=len(self.groups),
            rollouts=len(rollouts) + self.failed,
            read=len(rollouts),
            unscored=self.unscored,
            scored=len(rewards),
            reward_sum=sum(rewards),
            successes=sum(bool(r.success) for r in rollouts if r.scored),
            hacks=sum(r.hacked for r in rollouts),
            tool_calls=sum(r.tool_calls for r in rollouts),
        )


class RolloutRunner:
    """Runs rollouts of tasks through the proxy: one session each, under its own ``/s/{id}``,
    the verifier's outcome posted with the task id, the session read back from the store.

    :meth:`run_one` is the :class:`~trainer._scheduler.Scheduler`'s unit of work;
    :meth:`collect` runs whole groups of some tasks and returns them together.
    """

    def __init__(
        self,
        environment: Environment,
        *,
        proxy_url: str,
        admin: ProxyAdmin,
        store: Store,
        reward: RewardFunction,
        group_size: int,
        model: str,
        temperature: float,
        max_tokens: int,
        concurrency: int = 48,
        group_timeout: float | None = None,
        run_id: str | None = None,
        sampling: Sampling | None = None,
    ) -> None:
        self.environment = environment
        self.proxy_url = proxy_url.rstrip("/")
        self.admin = admin
        self.store = store
        self.reward = reward
        self.group_size = group_size
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.concurrency = max(1, concurrency)
        self.group_timeout = group_timeout
        self.run_id = run_id or uuid.uuid4().hex[:8]
        self.sampling = sampling
        """Enforced on every rollout session by the proxy; turns sampled otherwise are left
        out of the rows."""

    def endpoint(self, task: Task, index: int) -> Endpoint:
        """A fresh session for rollout ``index`` of ``task`` (ids never repeat, even when a
        stopped run is resumed)."""
        session_id = (
            f"{self.run_id}-{_UNSAFE.sub('_', task.id)[:48]}-{index}-{uuid.uuid4().hex[:6]}"
        )
        return Endpoint(
            base_url=f"{self.proxy_url}/s/{session_id}/v1",
            session_id=session_id,
            harness=self.environment.harness,
            model=self.model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            thinking=self.sampling.thinking if self.sampling is not None else True,
        )

    def scheduler(
        self,
        *,
        on_result: Callable[[RolloutResult], None] | None = None,
        on_start: Callable[[Task, int], None] | None = None,
    ) -> Scheduler:
        return Scheduler(
            self.run_one,
            group_size=self.group_size,
            concurrency=self.concurrency,
            group_timeout=self.group_timeout,
            on_result=on_result,
            on_start=on_start,
        )

    async def collect(self, tasks: Sequence[Task]) -> StepRollouts:
        """Run every rollout of ``tasks`` and read them back; groups come out as they finish."""
        outcome = StepRollouts()
        async for released in self.scheduler().groups(tasks):
            outcome.add(released)
        return outcome

    async def run_one(self, task: Task, index: int) -> RolloutResult:
        """One rollout: a failure of the harness, the sandbox or the verifier leaves it
        unscored (no outcome is posted, so it never scores 0) and says which it was."""
        endpoint = self.endpoint(task, index)
        session_id = endpoint.session_id
        started = time.monotonic()

        def ended(status: Status, **extra: Any) -> RolloutResult:
            return RolloutResult(
                task.id, index, session_id, status, time.monotonic() - started, **extra
            )

        # The proxy (uvicorn) closes a connection idle for 5 s, httpx's default keep-alive; a
        # rollout often idles the connection about that long, and a POST sent on a connection
        # the server is closing fails without a response. Idle connections go after 1 s.
        limits = httpx.Limits(keepalive_expiry=1.0)
        async with httpx.AsyncClient(timeout=120.0, limits=limits) as client:
            try:
                if self.sampling is not None:
                    sampling = self.sampling.to_json()
                    await self.admin.open_training_session(client, endpoint.session_id, sampling)
                if self.admin.guarded:
                    key = await self.admin.session_key(client, session_id)
                    endpoint = replace(endpoint, api_key=key)
                result = await self.environment.rollout(task, endpoint)
            except RolloutFailure as failure:
                logger.warning("rollout %s of task %s: %s", session_id, task.id, failure)
                return ended(failure.kind, error=failure.detail)
            except Exception as problem:  # an agent or verifier failure is an unscored rollout
                logger.warning("rollout %s of task %s failed: %r", session_id, task.id, problem)
                return ended("error", error=repr(problem))
            failed = failure_of(result)
            if failed is not None:
                logger.info("rollout %s of task %s: %s, left unscored", session_id, task.id, failed)
                return ended(failed, outcome=result)
            try:
                await self.admin.post_outcome(client, session_id, {**result, "task_id": task.id})
            except (ProxyAdminError, httpx.HTTPError) as problem:
                logger.warning("rollout %s: %s", session_id, problem)
                return ended("error", outcome=result, error=str(problem))
        rollout = await read_rollout(
            self.store,
            session_id,
            self.reward,
            task_of=_lookup({session_id: task.id}),
            sampling=self.sampling,
        )
        if rollout is None:
            return ended("error", outcome=result, error="the session never reached the proxy")
        return ended("scored" if rollout.scored else "unscored", rollout=rollout, outcome=result)


def _lookup(task_of: Mapping[str, str]) -> TaskOf:
    def task_id(session: SessionRecord) -> str | None:
        return task_of.get(session.id)

    return task_id
