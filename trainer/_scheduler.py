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
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Iterator, Mapping
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


@dataclass(slots=True)
class _State:
    """One :meth:`Scheduler.groups` run: the task stream, open groups, running rollouts
    (each with its group's number, ``None`` once that group was released without it)."""

    stream: Iterator[Task]
    skip: dict[str, frozenset[int]]
    exhausted: bool = False
    numbers: Iterator[int] = field(default_factory=itertools.count)
    open: dict[int, _Open] = field(default_factory=dict)
    running: dict[asyncio.Task[RolloutResult], int | None] = field(default_factory=dict)

    def next_slot(self) -> tuple[int, _Open] | None:
        """The oldest open group with a rollout still to start."""
        for number, entry in self.open.items():
            if entry.to_launch:
                return number, entry
        return None

    def open_next(self, group_size: int) -> bool:
        """Open the next task's group (``False`` once the stream is done); a task whose
        rollouts all ran before (``skip``) opens nothing."""
        if self.exhausted:
            return False
        task = next(self.stream, None)
        if task is None:
            self.exhausted = True
            return False
        done = self.skip.get(task.id, frozenset())
        indices = [i for i in range(group_size) if i not in done]
        if indices:
            number = next(self.numbers)
            self.open[number] = _Open(GroupResult(task, number, expected=len(indices)), indices)
        return True

    def wait(self) -> float | None:
        """Seconds until the next group deadline (``None``: none is set)."""
        deadlines = [e.deadline for e in self.open.values() if e.deadline is not None]
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - time.monotonic())

    def release(self) -> list[GroupResult]:
        """Close the groups whose rollouts are all in, or whose deadline passed (their
        stragglers then belong to no group)."""
        now = time.monotonic()
        released: list[GroupResult] = []
        for number, entry in list(self.open.items()):
            complete = not entry.running and not entry.to_launch
            if not complete and (entry.deadline is None or now < entry.deadline):
                continue
            del self.open[number]
            if not complete:
                entry.result.timed_out = True
                for job, owner in self.running.items():
                    if owner == number:
                        self.running[job] = None
            released.append(entry.result)
        return released


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
        state = _State(iter(tasks), dict(skip or {}))
        try:
            while True:
                self._fill(state)
                if not state.running:
                    for number in list(state.open):
                        yield state.open.pop(number).result
                    return
                finished, _ = await asyncio.wait(
                    state.running, timeout=state.wait(), return_when=asyncio.FIRST_COMPLETED
                )
                self._harvest(state, finished)
                for released in state.release():
                    yield released
        finally:
            for job in state.running:
                job.cancel()
            await asyncio.gather(*state.running, return_exceptions=True)

    def _fill(self, state: _State) -> None:
        """Start rollouts until ``concurrency`` run or nothing is left to start."""
        while len(state.running) < self.concurrency:
            slot = state.next_slot()
            if slot is None:
                if not state.open_next(self.group_size):
                    break
                continue
            number, entry = slot
            index = entry.to_launch.pop(0)
            entry.running += 1
            if entry.deadline is None and self.group_timeout is not None:
                entry.deadline = time.monotonic() + self.group_timeout
            job = asyncio.create_task(self._guarded(entry.result.task, index))
            state.running[job] = number
            self.started += 1
            if self.on_start is not None:
                self.on_start(entry.result.task, index)
        self.live = len(state.running)
        self.peak = max(self.peak, self.live)

    def _harvest(self, state: _State, finished: Iterable[asyncio.Task[RolloutResult]]) -> None:
        """File finished rollouts with their open group, or as ``late`` once it was released."""
        for job in finished:
            owner = state.running.pop(job)
            result = job.result()
            entry = state.open.get(owner) if owner is not None else None
            if entry is None:
                self.late += 1
                result = result.with_status("late")
            else:
                entry.running -= 1
                entry.result.results.append(result)
            if self.on_result is not None:
                self.on_result(result)
        self.live = len(state.running)

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
