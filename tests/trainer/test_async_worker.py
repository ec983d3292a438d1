from __future__ import annotations

import asyncio
import queue
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from trainer._advantages import Group
from trainer._async_worker import TranscriptRolloutWorker
from trainer._environment import Task
from trainer._publish import AdapterPublisher
from trainer._rollouts import Rollout
from trainer._rows import Row
from trainer._runner import StepRollouts

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
    """A ``collect`` that returns, per task, a win, a hacked loss and an unscored rollout."""

    def __init__(self, *, version: int = 1, fail: Exception | None = None) -> None:
        self.version = version
        self.fail = fail
        self.calls: list[list[str]] = []

    async def __call__(self, tasks: Sequence[Task]) -> StepRollouts:
        self.calls.append([task.id for task in tasks])
        if self.fail is not None:
            raise self.fail
        collected = StepRollouts(failed=1)
        for index, task in enumerate(tasks):
            base = 100 * (len(self.calls) * 10 + index)
            members = (
                rollout(f"{task.id}-a", task.id, 1.0, base, version=self.version, tool_calls=4),
                rollout(f"{task.id}-b", task.id, 0.0, base + 10, version=self.version, hacked=True),
                rollout(f"{task.id}-c", task.id, None, base + 20, version=self.version),
            )
            collected.groups.append(Group(task.id, members))
            collected.rollouts.extend(members)
        return collected


@pytest.fixture
def workers() -> Iterator[Callable[..., TranscriptRolloutWorker]]:
    made: list[TranscriptRolloutWorker] = []

    def make(collect: Any, **options: Any) -> TranscriptRolloutWorker:
        options.setdefault("tasks_per_round", 1)
        options.setdefault("max_inflight", 1)
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
    for sample, advantage in zip((first, second), (0.5, -0.5), strict=True):
        source = expected[2 * advantage]
        assert sample.advantage == advantage
        assert sample.input_ids.tolist() == list(source.input_ids)
        assert sample.completion_mask.tolist() == list(source.loss_mask)
        assert sample.old_log_probs.tolist() == pytest.approx(list(source.logprobs))
        assert sample.model_version == 3
        assert sample.metrics["reward"] == (1.0 if advantage > 0 else 0.0)
        assert sample.enqueued_at is not None
    assert first.group_id == second.group_id


def test_unscored_rollouts_give_no_samples_and_groups_get_fresh_ids(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    collect = Collector()
    worker = workers(collect, tasks_per_round=2)
    worker.start()
    samples = [worker.rollout_buffer.get(timeout=3) for _ in range(8)]
    firsts = {int(sample.input_ids[0]) % 100 for sample in samples}
    assert firsts <= {0, 10}  # the win (offset 0) and the loss (offset 10), never offset 20
    ids = [sample.group_id for sample in samples]
    assert ids == sorted(ids) and len(set(ids)) == 4  # two groups a round, two samples a group


def test_tasks_are_taken_in_turn_and_cycle(workers: Callable[..., TranscriptRolloutWorker]) -> None:
    collect = Collector()
    worker = workers(collect, tasks_per_round=2)
    worker.start()
    wait_for(lambda: len(collect.calls) >= 3)
    assert collect.calls[:3] == [["t1", "t2"], ["t3", "t1"], ["t2", "t3"]]


def test_stale_samples_are_dropped_and_counted(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    versions: list[int] = []
    collect = Collector(version=2)
    worker = workers(collect, max_staleness=4, on_version=versions.append)
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


def test_round_metrics_arrive_in_trls_format(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    worker = workers(Collector())
    worker.start()
    metrics = worker.metrics_queue.get(timeout=3)
    assert metrics["safeagents/reward_mean"] == (1.0, 2.0)
    assert metrics["safeagents/success_rate"] == (1.0, 2.0)
    assert metrics["safeagents/hack_rate"] == (1.0, 4.0)  # the failed rollout counts too
    assert metrics["safeagents/tool_calls_mean"] == (4.0, 4.0)
    assert metrics["safeagents/unscored_total"] == 2.0  # the failed one and the unscored one
    assert metrics["safeagents/samples_total"] == 2.0
    assert metrics["safeagents/groups_total"] == 1.0
    assert metrics["safeagents/dropped_stale_total"] == 0.0


def test_a_full_buffer_holds_rounds_back(workers: Callable[..., TranscriptRolloutWorker]) -> None:
    collect = Collector()
    worker = workers(collect, tasks_per_round=2, queue_maxsize=3)
    worker.start()
    wait_for(worker.rollout_buffer.full)
    time.sleep(0.2)
    assert len(collect.calls) == 1 and worker.rounds == 0
    worker.check_health(stale_after_s=0.1)  # held back by the trainer is not hung
    for _ in range(4):
        worker.rollout_buffer.get(timeout=3)
    wait_for(lambda: worker.rounds >= 1 and len(collect.calls) >= 2)


def test_check_health_raises_once_collect_raised(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    worker = workers(Collector(fail=ValueError("proxy down")))
    worker.start()
    wait_for(lambda: not worker.running)
    with pytest.raises(RuntimeError, match="proxy down") as raised:
        worker.check_health(stale_after_s=3600)
    assert isinstance(raised.value.__cause__, ValueError)


def test_check_health_raises_when_nothing_is_queued_for_too_long(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    async def nothing(tasks: Sequence[Task]) -> StepRollouts:
        await asyncio.sleep(0.01)
        return StepRollouts(failed=len(tasks))

    worker = workers(nothing)
    worker.start()
    worker.check_health(stale_after_s=60)
    time.sleep(0.15)
    worker.check_health(stale_after_s=60)
    with pytest.raises(RuntimeError, match="queued no sample"):
        worker.check_health(stale_after_s=0.1)


def test_stop_cancels_rounds_in_flight_and_joins(
    workers: Callable[..., TranscriptRolloutWorker],
) -> None:
    started, cancelled = [], []

    async def hangs(tasks: Sequence[Task]) -> StepRollouts:
        started.append(tasks)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(tasks)
            raise
        return StepRollouts()

    worker = workers(hangs, max_inflight=2)
    worker.start()
    wait_for(lambda: len(started) == 2)
    worker.stop(timeout=3)
    assert not worker.running
    assert len(cancelled) == 2
    worker.check_health(stale_after_s=3600)  # a clean stop is not a failure
    with pytest.raises(queue.Empty):
        worker.rollout_buffer.get_nowait()


def test_constructor_rejects_what_cannot_run() -> None:
    collect = Collector()
    with pytest.raises(ValueError, match="at least one task"):
        TranscriptRolloutWorker(collect, [], tasks_per_round=1)
    with pytest.raises(ValueError, match="positive"):
        TranscriptRolloutWorker(collect, TASKS, tasks_per_round=0)
    with pytest.raises(ValueError, match="max_staleness"):
        TranscriptRolloutWorker(collect, TASKS, tasks_per_round=1, max_staleness=-1)


def test_announced_versions_repoint_the_proxy_alias(tmp_path: Path) -> None:
    from types import SimpleNamespace

    calls: list[tuple[str, str]] = []
    admin = SimpleNamespace(set_alias=lambda harness, model: calls.append((harness, model)))
    server: Any = SimpleNamespace()  # TRL loads the adapters on this path
    publisher = AdapterPublisher(
        harness="pi", output_dir=tmp_path, server=server, proxy=admin, max_staleness=4
    )
    worker = TranscriptRolloutWorker(
        Collector(), TASKS, tasks_per_round=1, on_version=publisher.serving
    )
    worker.update_model_version(1)
    worker.update_model_version(2)
    assert calls == [("pi", "pi-v1"), ("pi", "pi-v2")]
    assert worker.model_version == 2 and publisher.version == 2
