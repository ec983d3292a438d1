"""A rollout worker for TRL's ``AsyncGRPOTrainer`` that trains on safeagents transcripts.

TRL's own worker generates completions itself; this one lets the agents run (through the
proxy, scheduled continuously by :class:`~trainer._scheduler.Scheduler`) and turns what the
transcript store recorded into TRL's ``RolloutSample``\\ s: the engine's own token ids, the
loss mask as the completion mask, the engine's logprobs as the old logprobs, and the
group-relative advantage of :func:`~trainer._advantages.group_samples`. It runs in-process,
on a background thread with its own event loop, and implements TRL 1.16's
``RolloutWorkerProtocol`` (``rollout_buffer``, ``metrics_queue``, ``start``, ``stop``,
``update_model_version``, ``check_health``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import queue
import threading
import time
import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Iterator, Sequence
from multiprocessing.queues import Queue as ProcessQueue
from typing import TYPE_CHECKING, Any

from trainer._advantages import Sample, zero_advantage
from trainer._batching import Staleness, learning_samples, row_version
from trainer._environment import Task
from trainer._rows import Row
from trainer._runner import StepRollouts
from trainer._scheduler import GroupResult

if TYPE_CHECKING:
    from trl.experimental.async_grpo.async_rollout_worker import RolloutSample

__all__ = ["GroupStream", "MetricValue", "TranscriptRolloutWorker", "round_metrics"]

logger = logging.getLogger("safeagents.trainer")

GroupStream = Callable[[Iterable[Task]], AsyncGenerator[GroupResult, None]]
"""Runs the rollouts of a stream of tasks and yields each group as it is released
(``RolloutRunner.scheduler().groups``)."""
MetricValue = float | tuple[float, float]
"""TRL's metric shapes: a gauge or counter, or a ``(numerator, denominator)`` rate."""

_METRICS_MAXSIZE = 4096
_POLL_S = 0.05


def round_metrics(
    collected: StepRollouts,
    *,
    samples: int,
    dropped_stale: int,
    zero_advantage_groups: int = 0,
    steps_behind: Sequence[int] = (),
) -> dict[str, MetricValue]:
    """Rollout metrics of some groups in TRL's format: rates as pairs, ``_total`` counters."""
    summary = collected.summary()
    total = float(summary.rollouts)
    metrics: dict[str, MetricValue] = {
        "safeagents/reward_mean": (summary.reward_sum, float(summary.scored)),
        "safeagents/success_rate": (float(summary.successes), float(summary.scored)),
        "safeagents/hack_rate": (float(summary.hacks), total),
        "safeagents/tool_calls_mean": (float(summary.tool_calls), total),
        "safeagents/groups_total": float(summary.groups),
        "safeagents/rollouts_total": total,
        "safeagents/unscored_total": float(summary.unscored),
        "safeagents/samples_total": float(samples),
        "safeagents/dropped_stale_total": float(dropped_stale),
        "safeagents/forks_total": float(sum(r.forks for r in collected.rollouts)),
        "safeagents/refused_sampling_total": float(
            sum(r.excluded.get("sampling", 0) for r in collected.rollouts)
        ),
        "safeagents/zero_advantage_groups_total": float(zero_advantage_groups),
        "safeagents/group_timeouts_total": float(collected.timed_out_groups),
    }
    for kind, count in sorted(collected.failures.items()):
        metrics[f"safeagents/failed_{kind}_total"] = float(count)
    if steps_behind:
        metrics["safeagents/staleness_steps_mean"] = (
            float(sum(steps_behind)),
            float(len(steps_behind)),
        )
        metrics["safeagents/staleness_steps_max"] = float(max(steps_behind))
    return metrics


@contextlib.contextmanager
def quiet_trl_experimental() -> Iterator[None]:
    """Silence the warning TRL gives on the first import of ``trl.experimental``."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"You are importing from 'trl\.experimental'")
        yield


def _rollout_sample_class() -> type[RolloutSample]:
    with quiet_trl_experimental():
        from trl.experimental.async_grpo.async_rollout_worker import RolloutSample
    return RolloutSample


class TranscriptRolloutWorker:
    """Feeds ``AsyncGRPOTrainer`` with samples from groups released by ``groups``.

    ``groups`` is given the tasks cycled endlessly; the scheduler behind it keeps its
    sessions running and releases each group when it completes or times out. Every group is
    turned into samples (unscored rollouts are left out of the baseline; zero-advantage
    samples, which carry no gradient, are skipped as on the CPU path, and the group is
    counted). A sample is stamped ``version_of(row)``, records how many optimiser steps it is
    behind ``current_step()``, and is dropped, and counted, when ``staleness`` says it is too
    old. A full ``rollout_buffer`` holds the stream back.

    The heartbeat :meth:`check_health` reads is refreshed by every group released and every
    sample queued: a run of all-failed groups is slow, not hung. ``on_version`` is called
    with each version TRL announces, on the trainer's thread, once that version is being
    served (the place to repoint the proxy's alias). A stream that raises stops the worker;
    :meth:`check_health` then raises with that error.
    """

    def __init__(
        self,
        groups: GroupStream,
        tasks: Sequence[Task],
        *,
        scale_std: bool = False,
        staleness: Staleness | None = None,
        version_of: Callable[[Row], int] = row_version,
        current_step: Callable[[], int] = lambda: 0,
        queue_maxsize: int = 1024,
        on_version: Callable[[int], None] | None = None,
    ) -> None:
        if not tasks:
            raise ValueError("the rollout worker needs at least one task")
        self.groups = groups
        self.tasks = tuple(tasks)
        self.scale_std = scale_std
        self.staleness = staleness if staleness is not None else Staleness(first_trained=1)
        self.version_of = version_of
        self.current_step = current_step
        self.on_version = on_version
        # Typed as TRL's protocol declares them; they hold RolloutSamples and metric dicts.
        self.rollout_buffer: queue.Queue[Any] | ProcessQueue[Any] = queue.Queue(queue_maxsize)
        self.metrics_queue: queue.Queue[Any] | ProcessQueue[Any] = queue.Queue(_METRICS_MAXSIZE)
        self.model_version = 0
        self.released = 0
        """Groups whose samples have all been queued (or dropped)."""
        self.dropped_stale = 0
        self.zero_advantage_groups = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._heartbeat = time.monotonic()
        self._sample_class: type[RolloutSample] | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start producing rollouts on a background thread (a second call does nothing)."""
        if self._thread is not None:
            return
        self._sample_class = _rollout_sample_class()
        self._heartbeat = time.monotonic()
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._main, name="safeagents-rollout-worker", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Cancel the rollouts in flight and join the thread."""
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        thread.join(timeout)
        if thread.is_alive():
            logger.warning("the rollout worker did not stop within %.0fs", timeout)
            return
        self._thread = None

    def update_model_version(self, model_version: int) -> None:
        """TRL's announcement that ``model_version`` is now the one served."""
        self.model_version = model_version
        if self.on_version is not None:
            self.on_version(model_version)

    def check_health(self, stale_after_s: float) -> None:
        """Raise if the worker died, or released no group for ``stale_after_s`` seconds."""
        if self._error is not None:
            raise RuntimeError(f"the rollout worker failed: {self._error!r}") from self._error
        if self._thread is not None and not self._thread.is_alive() and not self._stop.is_set():
            raise RuntimeError("the rollout worker's thread has exited")
        idle = time.monotonic() - self._heartbeat
        if idle > stale_after_s:
            raise RuntimeError(
                f"the rollout worker released no group for {idle:.0f}s (> {stale_after_s:.0f}s)"
            )

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as error:  # kept for check_health, which the trainer polls
            self._error = error
            logger.error("the rollout worker stopped: %r", error)

    async def _run(self) -> None:
        stream = self.groups(itertools.cycle(self.tasks))
        consume = asyncio.ensure_future(self._consume(stream))
        try:
            while not consume.done():
                if self._stop.is_set():
                    consume.cancel()
                await asyncio.wait({consume}, timeout=_POLL_S)
            if not consume.cancelled():
                consume.result()
        finally:
            if not consume.done():
                consume.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await consume
            await stream.aclose()

    async def _consume(self, stream: AsyncIterator[GroupResult]) -> None:
        async for released in stream:
            self._heartbeat = time.monotonic()
            if not await self._release(released):
                return

    async def _release(self, released: GroupResult) -> bool:
        """Queue the samples of one group; ``False`` once stopping."""
        collected = StepRollouts()
        collected.add(released)
        group = released.group
        step = self.current_step()
        fresh = learning_samples(
            group,
            current_version=self.model_version,
            max_staleness=self.staleness,
            step=step,
            scale_std=self.scale_std,
            version_of=self.version_of,
        )
        zero = zero_advantage(group)
        self.zero_advantage_groups += zero
        for sample, behind in zip(fresh.kept, fresh.steps_behind, strict=True):
            version = self.version_of(sample.row)
            if not await self._put(self._rollout_sample(sample, version, released.number, behind)):
                return False
        self.dropped_stale += fresh.dropped
        self.released += 1
        self._heartbeat = time.monotonic()
        if not fresh.kept:
            logger.info(
                "group %d of task %s gave no sample (%d unscored, %d stale, %s)",
                released.number,
                released.task.id,
                collected.unscored,
                fresh.dropped,
                "zero advantage" if zero else "no rows",
            )
        self._push_metrics(
            round_metrics(
                collected,
                samples=len(fresh.kept),
                dropped_stale=fresh.dropped,
                zero_advantage_groups=int(zero),
                steps_behind=fresh.steps_behind,
            )
        )
        return True

    def _rollout_sample(
        self, sample: Sample, version: int, group_id: int, steps_behind: int
    ) -> RolloutSample:
        import numpy as np

        assert self._sample_class is not None
        row = sample.row
        return self._sample_class(
            prompt=[],
            completion=[],
            input_ids=np.asarray(row.input_ids, dtype=np.int64),
            completion_mask=np.asarray(row.loss_mask, dtype=np.int64),
            old_log_probs=np.asarray(row.logprobs, dtype=np.float32),
            advantage=float(sample.advantage),
            model_version=version,
            group_id=group_id,
            metrics={"reward": float(sample.reward), "staleness_steps": float(steps_behind)},
        )

    async def _put(self, sample: RolloutSample) -> bool:
        """Queue ``sample``, waiting while the buffer is full; ``False`` once stopping."""
        while not self._stop.is_set():
            sample.enqueued_at = time.time()
            try:
                self.rollout_buffer.put_nowait(sample)
            except queue.Full:
                self._heartbeat = time.monotonic()  # held back by the trainer, not stuck
                await asyncio.sleep(_POLL_S)
                continue
            self._heartbeat = time.monotonic()
            return True
        return False

    def _push_metrics(self, metrics: dict[str, MetricValue]) -> None:
        with contextlib.suppress(queue.Full):  # a trainer not logging must not block rollouts
            self.metrics_queue.put_nowait(metrics)
