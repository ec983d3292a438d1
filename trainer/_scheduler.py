"""Continuous rollout scheduling: up to ``concurrency`` sessions live, a new one started as
each finishes, a task's group released as soon as its rollouts are in or its time is up.

There are no rounds: a slow session holds only its own slot and, at worst, its own group
until ``group_timeout``. A group released on time out leaves its stragglers running (the
environment bounds their wall time) and their results are recorded as ``late``; they still
hold a slot, so the number of live sessions never exceeds ``concurrency``.

The scheduler knows nothing of the proxy: ``run_one(task, index)`` runs one rollout and
returns its :class:`RolloutResult` (see :class:`~trainer._runner.RolloutRunner`).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from trainer._advantages import Group
from trainer._environment import Task
from trainer._rollouts import Rollout

__all__ = [
    "FAILURES",
    "GroupResult",
    "RolloutFailure",
    "RolloutResult",
    "RunOne",
    "Scheduler",
    "Status",
    "failure_of",
]

Status = Literal["scored", "unscored", "crash", "timeout", "sandbox", "error", "late"]
FAILURES: tuple[Status, ...] = ("crash", "timeout", "sandbox", "error")
"""Statuses of a rollout that ran but cannot be scored: never a reward of 0, always counted."""


class RolloutFailure(Exception):
    """Raised by an environment for a rollout that cannot be scored (``kind`` one of
    ``crash``, ``timeout``, ``sandbox``); any other exception counts as ``error``."""

    def __init__(self, kind: Literal["crash", "timeout", "sandbox"], detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind: Status = kind
        self.detail = detail


def failure_of(outcome: Mapping[str, Any]) -> Status | None:
    """The failure an environment's outcome reports, if any: an explicit ``failure``
    (``crash``, ``timeout`` or ``sandbox``), ``timed_out`` true, or a non-zero
    ``harness_exit``. Such a rollout is left unscored whatever its verifier said."""
    explicit = outcome.get("failure")
    if explicit in ("crash", "timeout", "sandbox"):
        return explicit  # type: ignore[no-any-return]
    if explicit is not None:
        return "error"
    if outcome.get("timed_out") is True:
        return "timeout"
    exit_code = outcome.get("harness_exit")
    if isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0:
        return "crash"
    return None


@dataclass(frozen=True, slots=True)
class RolloutResult:
    """One rollout as run: how it ended and, when read back from the store, its rollout."""

    task_id: str
    index: int
    """Its place in the task's group, 0 to ``group_size - 1``."""
    session_id: str
    status: Status
    seconds: float
    rollout: Rollout | None = None
    outcome: Mapping[str, Any] | None = None
    error: str | None = None

    @property
    def reward(self) -> float | None:
        return None if self.rollout is None else self.rollout.reward

    def with_status(self, status: Status) -> RolloutResult:
        return RolloutResult(
            self.task_id,
            self.index,
            self.session_id,
            status,
            self.seconds,
            self.rollout,
            self.outcome,
            self.error,
        )

    def to_json(self) -> dict[str, Any]:
        """One JSONL line of a rollout run (see :mod:`trainer._driver`)."""
        rollout = self.rollout
        return {
            "task_id": self.task_id,
            "index": self.index,
            "session_id": self.session_id,
            "status": self.status,
            "reward": self.reward,
            "success": None if rollout is None else rollout.success,
            "hacked": None if rollout is None else rollout.hacked,
            "tool_calls": None if rollout is None else rollout.tool_calls,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "outcome": None if self.outcome is None else dict(self.outcome),
        }


@dataclass(slots=True)
class GroupResult:
    """A released group: every rollout that came back in time, and whether time ran out."""

    task: Task
    number: int
    """Groups are numbered in the order they were opened."""
    results: list[RolloutResult] = field(default_factory=list)
    timed_out: bool = False
    expected: int = 0
    """Rollouts launched (or to launch) for this group in this run."""

    @property
    def group(self) -> Group:
        """The rollouts read back, for advantages (unscored ones stay out of the baseline)."""
        rollouts = tuple(r.rollout for r in self.results if r.rollout is not None)
        return Group(self.task.id, rollouts)

    @property
    def missing(self) -> int:
        """Rollouts not in the group: failed before being read back, or late."""
        return self.expected - sum(r.rollout is not None for r in self.results)


RunOne = Callable[[Task, int], Awaitable[RolloutResult]]


@dataclass(slots=True)
class _Open:
    result: GroupResult
    to_launch: list[int]
    running: int = 0
    deadline: float | None = None


class Scheduler:
    """Keeps up to ``concurrency`` rollouts running over a stream of tasks.

    Each task taken from the stream opens a group of ``group_size`` rollouts (fewer when
    ``skip`` says some already ran). Rollouts start in the order their groups opened; a group
    is yielded by :meth:`groups` once all of its rollouts returned, or ``group_timeout``
    seconds after its first one started. ``on_result`` sees every rollout as it ends, the
    late ones included.
    """

    def __init__(
        self,
        run_one: RunOne,
        *,
        group_size: int,
        concurrency: int = 48,
        group_timeout: float | None = None,
        on_result: Callable[[RolloutResult], None] | None = None,
        on_start: Callable[[Task, int], None] | None = None,
    ) -> None:
        if group_size <= 0 or concurrency <= 0:
            raise ValueError("group_size and concurrency must be positive")
        if group_timeout is not None and group_timeout <= 0:
            raise ValueError(f"group_timeout must be positive, got {group_timeout}")
        self.run_one = run_one
        self.group_size = group_size
        self.concurrency = concurrency
        self.group_timeout = group_timeout
        self.on_result = on_result
        self.on_start = on_start
        self.live = 0
        """Rollouts running now."""
        self.peak = 0
        """The most rollouts that ran at once."""
        self.late = 0
        self.started = 0

    async def groups(
        self, tasks: Iterable[Task], *, skip: Mapping[str, frozenset[int]] | None = None
    ) -> AsyncGenerator[GroupResult, None]:
        """Run the rollouts of ``tasks`` (may be endless), yielding groups as they complete.

        Tasks are read lazily, only when a slot is free, so an endless cycle is fine. On
        exit (the stream is done, or the consumer stops iterating) every rollout still
        running is cancelled.
        """
        skipped = skip or {}
        stream = iter(tasks)
        exhausted = False
        numbers = itertools.count()
        open_groups: dict[int, _Open] = {}
        running: dict[asyncio.Task[RolloutResult], int | None] = {}
        try:
            while True:
                while len(running) < self.concurrency:
                    slot = self._next_slot(open_groups)
                    if slot is None:
                        if exhausted:
                            break
                        task = next(stream, None)
                        if task is None:
                            exhausted = True
                            continue
                        done = skipped.get(task.id, frozenset())
                        indices = [i for i in range(self.group_size) if i not in done]
                        if indices:
                            number = next(numbers)
                            open_groups[number] = _Open(
                                GroupResult(task, number, expected=len(indices)), indices
                            )
                        continue
                    number, entry = slot
                    index = entry.to_launch.pop(0)
                    entry.running += 1
                    if entry.deadline is None and self.group_timeout is not None:
                        entry.deadline = time.monotonic() + self.group_timeout
                    running[asyncio.create_task(self._guarded(entry.result.task, index))] = number
                    self.started += 1
                    if self.on_start is not None:
                        self.on_start(entry.result.task, index)
                self.live = len(running)
                self.peak = max(self.peak, self.live)
                if not running:
                    for number in list(open_groups):
                        yield open_groups.pop(number).result
                    return
                finished, _ = await asyncio.wait(
                    running, timeout=self._wait(open_groups), return_when=asyncio.FIRST_COMPLETED
                )
                for job in finished:
                    owner = running.pop(job)
                    result = job.result()
                    entry_or_none = open_groups.get(owner) if owner is not None else None
                    if entry_or_none is None:
                        self.late += 1
                        result = result.with_status("late")
                    else:
                        entry_or_none.running -= 1
                        entry_or_none.result.results.append(result)
                    if self.on_result is not None:
                        self.on_result(result)
                self.live = len(running)
                for number in self._released(open_groups):
                    entry = open_groups.pop(number)
                    if entry.running or entry.to_launch:
                        entry.result.timed_out = True
                        for job, owner in running.items():
                            if owner == number:
                                running[job] = None
                    yield entry.result
        finally:
            for job in running:
                job.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    def _next_slot(self, open_groups: dict[int, _Open]) -> tuple[int, _Open] | None:
        for number, entry in open_groups.items():
            if entry.to_launch:
                return number, entry
        return None

    def _wait(self, open_groups: dict[int, _Open]) -> float | None:
        deadlines = [e.deadline for e in open_groups.values() if e.deadline is not None]
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - time.monotonic())

    def _released(self, open_groups: dict[int, _Open]) -> list[int]:
        now = time.monotonic()
        return [
            number
            for number, entry in open_groups.items()
            if (not entry.running and not entry.to_launch)
            or (entry.deadline is not None and now >= entry.deadline)
        ]

    async def _guarded(self, task: Task, index: int) -> RolloutResult:
        """``run_one``, with anything it raises turned into an ``error`` result."""
        started = time.monotonic()
        try:
            return await self.run_one(task, index)
        except asyncio.CancelledError:
            raise
        except Exception as problem:
            return RolloutResult(
                task.id, index, "", "error", time.monotonic() - started, error=repr(problem)
            )
