"""A rollout worker for TRL's ``AsyncGRPOTrainer`` that trains on safeagents transcripts.

TRL's own worker generates completions itself; this one lets the agents run (through the
proxy, in :class:`~trainer._runner.RolloutRunner`) and turns what the transcript store
recorded into TRL's ``RolloutSample``\\ s: the engine's own token ids, the loss mask as the
completion mask, the engine's logprobs as the old logprobs, and the group-relative advantage
of :func:`~trainer._advantages.group_samples`. It runs in-process, on a background thread
with its own event loop, and implements TRL 1.16's ``RolloutWorkerProtocol``
(``rollout_buffer``, ``metrics_queue``, ``start``, ``stop``, ``update_model_version``,
``check_health``).
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
from collections.abc import Awaitable, Callable, Iterator, Sequence
from multiprocessing.queues import Queue as ProcessQueue
from typing import TYPE_CHECKING, Any

from trainer._advantages import Sample
from trainer._batching import learning_samples, row_version
from trainer._environment import Task
from trainer._rows import Row
from trainer._runner import StepRollouts

if TYPE_CHECKING:
    from trl.experimental.async_grpo.async_rollout_worker import RolloutSample

__all__ = ["Collect", "MetricValue", "TranscriptRolloutWorker", "round_metrics"]

logger = logging.getLogger("safeagents.trainer")

Collect = Callable[[Sequence[Task]], Awaitable[StepRollouts]]
"""Runs the rollouts of some tasks and reads them back as groups (``RolloutRunner.collect``)."""
MetricValue = float | tuple[float, float]
"""TRL's metric shapes: a gauge or counter, or a ``(numerator, denominator)`` rate."""

_POLL_S = 0.05
_METRICS_MAXSIZE = 4096


def round_metrics(
    collected: StepRollouts, *, samples: int, dropped_stale: int
) -> dict[str, MetricValue]:
    """One round's rollout metrics in TRL's format: rates as pairs, ``_total`` counters."""
    summary = collected.summary()
    total = float(summary.rollouts)
    return {
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
    }


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
    """Feeds ``AsyncGRPOTrainer`` with samples from rounds of ``collect(tasks)``.

    Each round takes the next ``tasks_per_round`` tasks (cycling through ``tasks``), awaits
    ``collect``, and turns every group into samples (unscored rollouts are left out of the
    baseline; zero-advantage samples, which carry no gradient, are skipped as on the CPU
    path). A sample is stamped ``version_of(row)`` and dropped, and counted, when that is
    more than ``max_staleness`` behind the latest :meth:`update_model_version`. At most
    ``max_inflight`` rounds run at once, and a full ``rollout_buffer`` holds them back.

    ``on_version`` is called with each version TRL announces, on the trainer's thread, once
    that version is being served (the place to repoint the proxy's alias). A ``collect``
    that raises stops the worker; :meth:`check_health` then raises with that error.
    """

    def __init__(
        self,
        collect: Collect,
        tasks: Sequence[Task],
        *,
        tasks_per_round: int,
        scale_std: bool = False,
        max_staleness: int = 4,
        version_of: Callable[[Row], int] = row_version,
        max_inflight: int = 2,
        queue_maxsize: int = 1024,
        on_version: Callable[[int], None] | None = None,
    ) -> None:
        if not tasks:
            raise ValueError("the rollout worker needs at least one task")
        if tasks_per_round <= 0 or max_inflight <= 0:
            raise ValueError("tasks_per_round and max_inflight must be positive")
        if max_staleness < 0:
            raise ValueError(f"max_staleness must be >= 0, got {max_staleness}")
        self.collect = collect
        self.tasks = tuple(tasks)
        self.tasks_per_round = tasks_per_round
        self.scale_std = scale_std
        self.max_staleness = max_staleness
        self.version_of = version_of
        self.max_inflight = max_inflight
        self.on_version = on_version
        # Typed as TRL's protocol declares them; they hold RolloutSamples and metric dicts.
        self.rollout_buffer: queue.Queue[Any] | ProcessQueue[Any] = queue.Queue(queue_maxsize)
        self.metrics_queue: queue.Queue[Any] | ProcessQueue[Any] = queue.Queue(_METRICS_MAXSIZE)
        self.model_version = 0
        self.rounds = 0
        """Rounds whose samples have all been queued (or dropped)."""
        self.dropped_stale = 0
        self._cycle: Iterator[Task] = itertools.cycle(self.tasks)
        self._next_group = 0
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
        """Cancel the rounds in flight and join the thread."""
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
        """Raise if the worker died, or queued nothing for ``stale_after_s`` seconds."""
        if self._error is not None:
            raise RuntimeError(f"the rollout worker failed: {self._error!r}") from self._error
        if self._thread is not None and not self._thread.is_alive() and not self._stop.is_set():
            raise RuntimeError("the rollout worker's thread has exited")
        idle = time.monotonic() - self._heartbeat
        if idle > stale_after_s:
            raise RuntimeError(
                f"the rollout worker queued no sample for {idle:.0f}s (> {stale_after_s:.0f}s)"
            )

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as error:  # kept for check_health, which the trainer polls
            self._error = error
            logger.error("the rollout worker stopped: %r", error)

    async def _run(self) -> None:
        pending: set[asyncio.Task[None]] = set()
        try:
            while not self._stop.is_set():
                while len(pending) < self.max_inflight:
                    tasks = [next(self._cycle) for _ in range(self.tasks_per_round)]
                    pending.add(asyncio.create_task(self._round(tasks)))
                done, pending = await asyncio.wait(
                    pending, timeout=_POLL_S, return_when=asyncio.FIRST_COMPLETED
                )
                for finished in done:
                    finished.result()
        finally:
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def _round(self, tasks: Sequence[Task]) -> None:
        collected = await self.collect(tasks)
        queued = dropped = 0
        for group in collected.groups:
            group_id = self._next_group
            self._next_group += 1
            fresh = learning_samples(
                group,
                current_version=self.model_version,
                max_staleness=self.max_staleness,
                scale_std=self.scale_std,
                version_of=self.version_of,
            )
            dropped += fresh.dropped
            for sample in fresh.kept:
                version = self.version_of(sample.row)
                if not await self._put(self._rollout_sample(sample, version, group_id)):
                    return
                queued += 1
        self.dropped_stale += dropped
        self.rounds += 1
        if not queued:
            logger.warning(
                "a rollout round of %s gave no sample (%d unscored, %d stale)",
                [task.id for task in tasks],
                collected.unscored,
                dropped,
            )
        self._push_metrics(round_metrics(collected, samples=queued, dropped_stale=dropped))

    def _rollout_sample(self, sample: Sample, version: int, group_id: int) -> RolloutSample:
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
            metrics={"reward": float(sample.reward)},
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
