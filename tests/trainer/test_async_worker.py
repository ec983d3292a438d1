from __future__ import annotations

import asyncio
import queue
import time
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from trainer._async_worker import TranscriptRolloutWorker
from trainer._batching import Staleness
from trainer._environment import Task
from trainer._publish import AdapterPublisher
from trainer._rollouts import Rollout
from trainer._rows import Row
from trainer._scheduler import GroupResult, RolloutResult, Scheduler, Status

TASKS = [Task("t1", "fix the bug"), Task("t2", "add a test"), Task("t3", "refactor")]


def wait_for(condition: Callable[[], bool], seconds: float = 3.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def row(session: str, task: str, base: int, *, version: int) -> Row:
    """A two-turn row: prompt, completion, tool result, completion (token ids from ``base``)."""
    ids = tuple(range(base, base + 8))
    mask = (0, 0, 1, 1, 0, 0, 1, 1)
    logprobs = tuple(-0.1 * (i + 1) if m else 0.0 for i, m in enumerate(mask))
    model = f"opencode-v{version}"
    return Row(ids, mask, logprobs, session, "opencode", task, (model, model), (0, 1))


def rollout(
    session: str,
    task: str,
    reward: float | None,
    base: int,
    *,
    version: int = 1,
    hacked: bool = False,
    tool_calls: int = 0,
) -> Rollout:
    return Rollout(
        session_id=session,
        harness="opencode",
        task_id=task,
        reward=reward,
        hacked=hacked,
        tool_calls=tool_calls,
        success=None if reward is None else reward > 0,
        rows=(row(session, task, base, version=version),),
    )


class Collector:
    """A group stream from the real scheduler whose rollouts are, per task, a win, a hacked
    loss, an unscored rollout and one whose harness crashed."""

    def __init__(
        self, *, version: int = 1, fail: Exception | None = None, succeed: bool | None = None
    ) -> None:
        self.version = version
        self.fail = fail
        self.succeed = succeed
        self.calls: list[str] = []

    async def run_one(self, task: Task, index: int) -> RolloutResult:
        if index == 0:
            self.calls.append(task.id)
        if self.fail is not None:
            raise self.fail
        await asyncio.sleep(0.001 * index)
        base = 1000 * int(task.id[1:]) + 10 * index
        session = f"{task.id}-{'abcd'[index]}"
        if index == 3:
            return RolloutResult(task.id, index, session, "crash", 0.1)
        reward = [1.0, 0.0, None][index]
        if self.succeed is not None and reward is not None:
            reward = float(self.succeed)
        found = rollout(
            session,
            task.id,
            reward,
            base,
            version=self.version,
            hacked=index == 1,
            tool_calls=4 if index == 0 else 0,
        )
        status: Status = "scored" if reward is not None else "unscored"
        return RolloutResult(task.id, index, session, status, 0.1, found)

    def __call__(self, tasks: Iterable[Task]) -> AsyncGenerator[GroupResult, None]:
        if self.fail is not None:
            return self._failing(tasks)
        return Scheduler(self.run_one, group_size=4, concurrency=4).groups(tasks)

    async def _failing(self, tasks: Iterable[Task]) -> AsyncGenerator[GroupResult, None]:
        raise self.fail  # type: ignore[misc]
        yield  # pragma: no cover


@pytest.fixture
def workers() -> Iterator[Callable[..., TranscriptRolloutWorker]]:
    made: list[TranscriptRolloutWorker] = []

    def make(collect: Any, **options: Any) -> TranscriptRolloutWorker:
        worker = TranscriptRolloutWorker(collect, TASKS, **options)
        made.append(worker)
        return worker

    yield make
    for worker in made:
        worker.stop(timeout=5)


def test_samples_carry_the_rows_ids_masks_logprobs_advantages_and_versions(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    collect = Collector(version=3)
    worker = workers(collect, queue_maxsize=2)
    worker.start()
    first, second = worker.rollout_buffer.get(timeout=3), worker.rollout_buffer.get(timeout=3)
    expected = {
        1.0: row("t1-a", "t1", 1000, version=3),
        -1.0: row("t1-b", "t1", 1010, version=3),
    }
    # Baseline of the two scored rewards (1 and 0): the unscored member is not counted as 0.
    for sample in (first, second):
        source = expected[2 * sample.advantage]
        assert sample.input_ids.tolist() == list(source.input_ids)
        assert sample.completion_mask.tolist() == list(source.loss_mask)
        assert sample.old_log_probs.tolist() == pytest.approx(list(source.logprobs))
        assert sample.model_version == 3
        assert sample.metrics["reward"] == (1.0 if sample.advantage > 0 else 0.0)
        assert sample.enqueued_at is not None
    assert sorted(s.advantage for s in (first, second)) == [-0.5, 0.5]
    assert first.group_id == second.group_id


def test_unscored_and_failed_rollouts_give_no_samples_and_groups_get_fresh_ids(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    worker = workers(Collector())
    worker.start()
    samples = [worker.rollout_buffer.get(timeout=3) for _ in range(8)]
    offsets = {int(sample.input_ids[0]) % 100 for sample in samples}
    assert offsets <= {0, 10}  # the win (index 0) and the loss (index 1), never 2 or 3
    ids = [sample.group_id for sample in samples]
    assert len(set(ids)) == 4 and all(ids.count(i) == 2 for i in ids)


def test_tasks_are_taken_in_turn_and_cycle(workers: Callable[..., TranscriptRolloutWorker]) -> None:
    collect = Collector()
    worker = workers(collect)
    worker.start()
    wait_for(lambda: len(collect.calls) >= 5)
    assert collect.calls[:5] == ["t1", "t2", "t3", "t1", "t2"]


def test_stale_samples_are_dropped_and_counted(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    versions: list[int] = []
    collect = Collector(version=2)
    worker = workers(collect, staleness=Staleness(4), on_version=versions.append)
    worker.update_model_version(7)  # 7 - 2 = 5 > 4
    worker.start()
    wait_for(lambda: worker.dropped_stale >= 4)
    assert worker.rollout_buffer.empty()
    assert versions == [7]
    metrics = worker.metrics_queue.get(timeout=3)
    assert metrics["safeagents/dropped_stale_total"] == 2.0
    assert metrics["safeagents/samples_total"] == 0.0
    collect.version = 3  # 7 - 3 = 4: within the window
    sample = worker.rollout_buffer.get(timeout=3)
    assert sample.model_version == 3


def test_staleness_in_steps_drops_by_steps_and_records_each_samples_age(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    # TRL's async path: v1 is the untrained adapter, so version k holds step (k - 1) * 10.
    step = [35]
    staleness = Staleness(12, "steps", publish_every=10, first_trained=1)
    collect = Collector(version=2)  # step 10 weights: 25 steps behind step 35
    worker = workers(collect, staleness=staleness, current_step=lambda: step[0])
    worker.update_model_version(4)  # two versions behind: kept if counted in versions
    worker.start()
    wait_for(lambda: worker.dropped_stale >= 2)
    assert worker.rollout_buffer.empty()
    step[0] = 22  # 12 steps behind: kept
    sample = worker.rollout_buffer.get(timeout=3)
    assert sample.metrics["staleness_steps"] == 12.0
    while True:
        metrics = worker.metrics_queue.get(timeout=3)
        if metrics["safeagents/samples_total"]:
            break
    assert metrics["safeagents/staleness_steps_max"] == 12.0
    assert metrics["safeagents/staleness_steps_mean"] == (24.0, 2.0)


def test_group_metrics_arrive_in_trls_format(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    worker = workers(Collector())
    worker.start()
    metrics = worker.metrics_queue.get(timeout=3)
    assert metrics["safeagents/reward_mean"] == (1.0, 2.0)
    assert metrics["safeagents/success_rate"] == (1.0, 2.0)
    assert metrics["safeagents/hack_rate"] == (1.0, 4.0)  # the crashed rollout counts too
    assert metrics["safeagents/tool_calls_mean"] == (4.0, 4.0)
    assert metrics["safeagents/unscored_total"] == 2.0  # the crashed one and the unscored one
    assert metrics["safeagents/failed_crash_total"] == 1.0
    assert metrics["safeagents/samples_total"] == 2.0
    assert metrics["safeagents/groups_total"] == 1.0
    assert metrics["safeagents/dropped_stale_total"] == 0.0
    assert metrics["safeagents/zero_advantage_groups_total"] == 0.0


def test_all_failed_groups_are_counted_and_keep_the_worker_healthy(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    worker = workers(Collector(succeed=False))
    worker.start()
    wait_for(lambda: worker.released >= 3)
    metrics = worker.metrics_queue.get(timeout=3)
    assert metrics["safeagents/zero_advantage_groups_total"] == 1.0
    assert metrics["safeagents/samples_total"] == 0.0
    assert worker.zero_advantage_groups >= 3 and worker.rollout_buffer.empty()
    time.sleep(0.2)
    worker.check_health(stale_after_s=0.15)  # no sample for 0.2 s, but groups keep coming


def test_a_full_buffer_holds_the_stream_back(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    collect = Collector()
    worker = workers(collect, queue_maxsize=3)
    worker.start()
    wait_for(worker.rollout_buffer.full)
    time.sleep(0.1)
    held = len(collect.calls)
    time.sleep(0.2)
    # The consumer waits on the buffer, so the scheduler starts nothing new meanwhile.
    assert worker.released == 1 and len(collect.calls) == held
    worker.check_health(stale_after_s=0.1)  # held back by the trainer is not hung
    for _ in range(4):
        worker.rollout_buffer.get(timeout=3)
    wait_for(lambda: worker.released >= 2)


def test_check_health_raises_once_the_stream_raised(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    worker = workers(Collector(fail=ValueError("proxy down")))
    worker.start()
    wait_for(lambda: not worker.running)
    with pytest.raises(RuntimeError, match="proxy down") as raised:
        worker.check_health(stale_after_s=3600)
    assert isinstance(raised.value.__cause__, ValueError)


def test_check_health_raises_when_no_group_is_released_for_too_long(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    async def hangs(task: Task, index: int) -> RolloutResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    worker = workers(lambda tasks: Scheduler(hangs, group_size=2, concurrency=2).groups(tasks))
    worker.start()
    worker.check_health(stale_after_s=60)
    time.sleep(0.15)
    worker.check_health(stale_after_s=60)
    with pytest.raises(RuntimeError, match="released no group"):
        worker.check_health(stale_after_s=0.1)


def test_stop_cancels_the_rollouts_in_flight_and_joins(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    started, cancelled = [], []

    async def hangs(task: Task, index: int) -> RolloutResult:
        started.append((task.id, index))
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append((task.id, index))
            raise
        raise AssertionError("unreachable")

    worker = workers(lambda tasks: Scheduler(hangs, group_size=2, concurrency=3).groups(tasks))
    worker.start()
    wait_for(lambda: len(started) == 3)
    worker.stop(timeout=3)
    assert not worker.running
    assert sorted(cancelled) == sorted(started)
    worker.check_health(stale_after_s=3600)  # a clean stop is not a failure
    with pytest.raises(queue.Empty):
        worker.rollout_buffer.get_nowait()


def test_constructor_rejects_what_cannot_run() -> None:
    with pytest.raises(ValueError, match="at least one task"):
        TranscriptRolloutWorker(Collector(), [])
    with pytest.raises(ValueError, match="max_staleness"):
        Staleness(-1)


def test_announced_versions_repoint_the_proxy_alias(tmp_path: Path) -> None:
    from types import SimpleNamespace

    calls: list[tuple[str, str]] = []
    admin = SimpleNamespace(set_alias=lambda harness, model: calls.append((harness, model)))
    server: Any = SimpleNamespace()  # TRL loads the adapters on this path
    publisher = AdapterPublisher(
        harness="pi", output_dir=tmp_path, server=server, proxy=admin, max_staleness=4
    )
    worker = TranscriptRolloutWorker(Collector(), TASKS, on_version=publisher.serving)
    worker.update_model_version(1)
    worker.update_model_version(2)
    assert calls == [("pi", "pi-v1"), ("pi", "pi-v2")]
    assert worker.model_version == 2 and publisher.version == 2
