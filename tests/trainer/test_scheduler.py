"""The continuous scheduler: sessions kept live up to the limit, groups released as they
complete or time out, failures counted and never scored, resumption by skipping."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterable, Mapping

import pytest

from trainer._environment import Task
from trainer._rollouts import Rollout
from trainer._scheduler import (
    GroupResult,
    RolloutFailure,
    RolloutResult,
    Scheduler,
    failure_of,
)

TASKS = [Task(f"t{n}", f"task {n}") for n in range(6)]


class Rollouts:
    """A ``run_one`` whose rollouts take ``durations[(task, index)]`` seconds (0.02 else)."""

    def __init__(
        self,
        durations: Mapping[tuple[str, int], float] | None = None,
        fail: Mapping[tuple[str, int], Exception] | None = None,
    ) -> None:
        self.durations = dict(durations or {})
        self.fail = dict(fail or {})
        self.live = 0
        self.peak = 0
        self.started: list[tuple[str, int]] = []

    async def __call__(self, task: Task, index: int) -> RolloutResult:
        self.live += 1
        self.peak = max(self.peak, self.live)
        self.started.append((task.id, index))
        try:
            await asyncio.sleep(self.durations.get((task.id, index), 0.02))
            problem = self.fail.get((task.id, index))
            if problem is not None:
                raise problem
        finally:
            self.live -= 1
        rollout = Rollout(f"{task.id}-{index}", "pi", task.id, float(index % 2), False, index)
        return RolloutResult(task.id, index, rollout.session_id, "scored", 0.02, rollout)


async def take(
    scheduler: Scheduler, tasks: Iterable[Task], count: int | None = None, **options: object
) -> list[GroupResult]:
    released: list[GroupResult] = []
    stream = scheduler.groups(tasks, **options)  # type: ignore[arg-type]
    async for group in stream:
        released.append(group)
        if count is not None and len(released) == count:
            break
    await stream.aclose()
    return released


def test_a_straggler_holds_only_its_slot_and_its_group() -> None:
    run = Rollouts({("t0", 1): 0.6})
    scheduler = Scheduler(run, group_size=2, concurrency=4)
    started = time.monotonic()
    released = asyncio.run(take(scheduler, TASKS))
    order = [group.task.id for group in released]
    assert order[-1] == "t0" and sorted(order) == [task.id for task in TASKS]
    # Every other group was released while t0's straggler ran: no barrier round.
    assert time.monotonic() - started < 0.9
    assert run.peak == 4 and scheduler.peak == 4
    assert all(len(group.results) == 2 and group.missing == 0 for group in released)
    assert not any(group.timed_out for group in released)


def test_new_sessions_start_as_each_one_finishes() -> None:
    run = Rollouts({("t0", 0): 0.3})
    scheduler = Scheduler(run, group_size=2, concurrency=3)
    released = asyncio.run(take(scheduler, TASKS))
    # The slot of t0/0 stayed busy; the two others went through every remaining rollout.
    assert run.started[:2] == [("t0", 0), ("t0", 1)]
    assert len(run.started) == 12 and run.peak == 3
    assert [group.task.id for group in released][-1] == "t0"


def test_a_group_times_out_without_its_stragglers_which_come_back_late() -> None:
    run = Rollouts({("t0", 1): 0.5})
    seen: list[RolloutResult] = []
    scheduler = Scheduler(
        run, group_size=2, concurrency=2, group_timeout=0.2, on_result=seen.append
    )
    released = asyncio.run(take(scheduler, TASKS[:3]))
    first = next(group for group in released if group.task.id == "t0")
    assert first.timed_out and first.missing == 1 and len(first.results) == 1
    assert [r.status for r in seen if r.task_id == "t0" and r.index == 1] == ["late"]
    assert scheduler.late == 1
    assert all(not g.timed_out and g.missing == 0 for g in released if g.task.id != "t0")


def test_failures_are_results_with_a_status_and_the_group_is_still_released() -> None:
    run = Rollouts(fail={("t1", 0): RuntimeError("harness segfault")})
    scheduler = Scheduler(run, group_size=3, concurrency=8)
    released = asyncio.run(take(scheduler, TASKS[:2]))
    broken = next(group for group in released if group.task.id == "t1")
    failed = [r for r in broken.results if r.status == "error"]
    assert len(failed) == 1 and "segfault" in (failed[0].error or "")
    assert failed[0].reward is None and broken.missing == 1
    assert len(broken.group.rollouts) == 2


def test_an_endless_stream_is_read_lazily_and_stopping_cancels_what_runs() -> None:
    run = Rollouts({(task.id, 1): 5.0 for task in TASKS})
    scheduler = Scheduler(run, group_size=2, concurrency=4, group_timeout=0.1)
    started = time.monotonic()
    released = asyncio.run(take(scheduler, itertools.cycle(TASKS), count=3))
    assert len(released) == 3 and all(group.timed_out for group in released)
    assert time.monotonic() - started < 2.0  # the 5 s rollouts were cancelled
    assert run.live == 0 and len(run.started) <= 4 + 3 * 2


def test_resuming_skips_the_rollouts_already_recorded() -> None:
    run = Rollouts()
    scheduler = Scheduler(run, group_size=4, concurrency=4)
    skip = {"t0": frozenset({0, 1, 2, 3}), "t1": frozenset({0, 2})}
    released = asyncio.run(take(scheduler, TASKS[:3], skip=skip))
    assert sorted(run.started) == [("t1", 1), ("t1", 3), *(("t2", i) for i in range(4))]
    assert [(g.task.id, g.expected) for g in released] == [("t1", 2), ("t2", 4)]


def test_failure_of_reads_the_environments_outcome() -> None:
    assert failure_of({"success": True, "reward": 1.0, "harness_exit": 0}) is None
    assert failure_of({"success": False, "timed_out": True}) == "timeout"
    assert failure_of({"success": True, "harness_exit": 139}) == "crash"
    assert failure_of({"failure": "sandbox", "success": True}) == "sandbox"
    assert failure_of({"failure": "weird"}) == "error"
    assert RolloutFailure("sandbox", "bwrap: no user namespaces").kind == "sandbox"


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        Scheduler(Rollouts(), group_size=0)
    with pytest.raises(ValueError, match="group_timeout"):
        Scheduler(Rollouts(), group_size=2, group_timeout=0)
