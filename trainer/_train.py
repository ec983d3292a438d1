"""One training run: environment rollouts through the proxy, GRPO steps, adapters published.

``Training`` wires the parts for one harness (one adapter): the :class:`RolloutRunner`
collects a step's groups, the pure data path turns them into micro-batches, TRL's trainer
takes the step, and every ``publish_every`` steps the :class:`AdapterPublisher` makes the new
version the one the proxy serves.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from safeagents.store import open_store
from trainer._advantages import Sample, zero_advantage
from trainer._batching import learning_samples, pack_micro_batches
from trainer._config import TrainerConfig
from trainer._curriculum import refuse_held_out, weighted
from trainer._driver import runner_from_config
from trainer._environment import Environment, Task, load_environment
from trainer._metrics import StepMetrics
from trainer._publish import AdapterPublisher, AdapterServer
from trainer._runner import ProxyAdmin, StepRollouts
from trainer._vllm import VLLMAdmin

if TYPE_CHECKING:
    from trainer._grpo import StepBatch

__all__ = ["Training", "TrainingResult", "step_stats"]

MetricsSink = Callable[[StepMetrics], None]
NoteSink = Callable[[str], None]


@dataclass(slots=True)
class TrainingResult:
    metrics: list[StepMetrics] = field(default_factory=list)
    published: list[str] = field(default_factory=list)


def _ratio(numerator: float, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def step_stats(collected: StepRollouts) -> dict[str, Any]:
    """The rollout side of a step's metrics."""
    summary = collected.summary()
    return {
        "groups": summary.groups,
        "rollouts": summary.rollouts,
        "unscored": summary.unscored,
        "reward_mean": _ratio(summary.reward_sum, summary.scored),
        "success_rate": _ratio(summary.successes, summary.scored),
        "hack_rate": _ratio(summary.hacks, summary.rollouts) or 0.0,
        "tool_calls_mean": _ratio(summary.tool_calls, summary.read) or 0.0,
        "forks": sum(rollout.forks for rollout in collected.rollouts),
        "refused_sampling": sum(r.excluded.get("sampling", 0) for r in collected.rollouts),
        "group_timeouts": collected.timed_out_groups,
    }


class Training:
    """GRPO for ``harness``'s adapter on the rollouts of ``environment``."""

    def __init__(
        self,
        config: TrainerConfig,
        *,
        environment: Environment | None = None,
        harness: str | None = None,
        server: AdapterServer | None = None,
        proxy_url: str | None = None,
    ) -> None:
        self.config = config
        if environment is None:
            if config.environment is None:
                raise ValueError("the config has no environment section: nothing to roll out")
            environment = load_environment(config.environment.factory, config.environment.options)
        self.environment = environment
        self.harness = harness or environment.harness
        if self.harness not in config.harnesses:
            raise ValueError(
                f"harness {self.harness!r} is not among the config's harnesses "
                f"{list(config.harnesses)}"
            )
        refuse_held_out(environment.tasks())
        self.tasks: dict[str, Task] = {task.id: task for task in environment.tasks()}
        self.curriculum: list[Task] = weighted(list(self.tasks.values()))
        """The tasks as training draws them: each as often as its curriculum weight."""
        if len(self.tasks) < config.grpo.tasks_per_step:
            raise ValueError(
                f"grpo.tasks_per_step is {config.grpo.tasks_per_step} but the environment has "
                f"only {len(self.tasks)} task(s)"
            )
        token = os.environ.get(config.proxy.admin_token_env) or None
        self.admin = ProxyAdmin(config.proxy.admin_url, token=token)
        self.proxy_url = proxy_url or config.proxy.admin_url.rsplit("/safeagents/", 1)[0]
        self._owned: VLLMAdmin | None = None
        if server is None:
            server = self._owned = VLLMAdmin(config.vllm.base_url)
        self.publisher = AdapterPublisher(
            harness=self.harness,
            output_dir=Path(config.output_dir),
            server=server,
            proxy=self.admin,
            max_staleness=config.grpo.staleness().versions_kept,
            keep_every=config.grpo.keep_every,
        )
        self.base_name = config.vllm.served_model or config.base_model
        self._loop = asyncio.new_event_loop()
        self._store = open_store(config.proxy.store)
        self.runner = runner_from_config(
            config, environment, store=self._store, proxy_url=self.proxy_url
        )
        self.result = TrainingResult()
        self._started = time.perf_counter()

    def next_batch(self, task_ids: Sequence[str]) -> StepBatch:
        """The :data:`StepSource`: run the tasks' rollouts, then group, filter and pack."""
        from trainer._grpo import StepBatch

        tasks = [self.tasks[task_id] for task_id in task_ids]
        collected = self._loop.run_until_complete(self.runner.collect(tasks))
        grpo = self.config.grpo
        trainer = getattr(self, "_trainer", None)
        step = int(trainer.state.global_step) if trainer is not None else 0
        learning: list[Sample] = []
        behind: list[int] = []
        dropped_stale = zero = 0
        for group in collected.groups:
            fresh = learning_samples(
                group,
                current_version=self.publisher.version,
                max_staleness=grpo.staleness(),
                step=step,
                scale_std=grpo.scale_std,
            )
            learning.extend(fresh.kept)
            behind.extend(fresh.steps_behind)
            dropped_stale += fresh.dropped
            zero += zero_advantage(group)
        packing = pack_micro_batches(learning, grpo.token_budget)
        stats = step_stats(collected)
        stats.update(
            version=self.publisher.version,
            samples=sum(len(batch.samples) for batch in packing.batches),
            micro_batches=len(packing.batches),
            dropped_stale=dropped_stale,
            dropped_oversize=packing.dropped_oversize,
            zero_advantage_groups=zero,
            staleness_steps_max=max(behind, default=0),
            staleness_steps_mean=sum(behind) / len(behind) if behind else 0.0,
        )
        return StepBatch(list(packing.batches), stats)

    def metrics(self, step: int, published: str | None) -> StepMetrics:
        from trainer._grpo import TranscriptGRPOTrainer

        trainer = self._trainer
        assert isinstance(trainer, TranscriptGRPOTrainer)
        batch = trainer.last_batch
        stats = dict(batch.stats) if batch is not None else {}
        tokens = batch.trained_tokens if batch is not None else 0
        seconds = trainer.last_step_seconds
        return StepMetrics(
            step=step,
            harness=self.harness,
            version=int(stats.get("version", self.publisher.version)),
            groups=int(stats.get("groups", 0)),
            rollouts=int(stats.get("rollouts", 0)),
            samples=int(stats.get("samples", 0)),
            unscored=int(stats.get("unscored", 0)),
            reward_mean=stats.get("reward_mean"),
            success_rate=stats.get("success_rate"),
            hack_rate=float(stats.get("hack_rate", 0.0)),
            tool_calls_mean=float(stats.get("tool_calls_mean", 0.0)),
            dropped_stale=int(stats.get("dropped_stale", 0)),
            dropped_oversize=int(stats.get("dropped_oversize", 0)),
            tokens=tokens,
            tokens_per_s=tokens / seconds if seconds > 0 else 0.0,
            loss=trainer.last_loss,
            step_seconds=seconds,
            elapsed_seconds=time.perf_counter() - self._started,
            published=published,
            importance_ratio_mean=stats.get("importance_ratio_mean"),
            importance_ratio_min=stats.get("importance_ratio_min"),
            importance_ratio_max=stats.get("importance_ratio_max"),
            clip_fraction=stats.get("clip_fraction"),
            behaviour_kl=stats.get("behaviour_kl"),
            forks=int(stats.get("forks", 0)),
            refused_sampling=int(stats.get("refused_sampling", 0)),
            micro_batches=int(stats.get("micro_batches", 0)),
            zero_advantage_groups=int(stats.get("zero_advantage_groups", 0)),
            staleness_steps_mean=float(stats.get("staleness_steps_mean", 0.0)),
            staleness_steps_max=int(stats.get("staleness_steps_max", 0)),
            group_timeouts=int(stats.get("group_timeouts", 0)),
        )

    def run(
        self, *, on_metrics: MetricsSink | None = None, on_note: NoteSink | None = None
    ) -> TrainingResult:
        """Train ``grpo.max_steps`` steps; the base model serves until v1 is published."""
        from trainer._trl import build_trainer

        note = on_note or (lambda text: None)
        self.admin.set_alias(self.harness, self.base_name)
        note(f"{self.harness} served by {self.base_name} (version 0)")
        self._trainer = build_trainer(
            self.config,
            self.curriculum,
            step_source=self.next_batch,
            on_step=self._on_step(on_metrics, note),
        )
        try:
            self._trainer.train()
        finally:
            self.close()
        return self.result

    def close(self) -> None:
        """Close the store reader and the vLLM client this training opened."""
        if self._loop.is_closed():
            return
        self._loop.run_until_complete(self._store.close())
        self._loop.close()
        if self._owned is not None:
            self._owned.close()

    def _on_step(
        self, on_metrics: MetricsSink | None, note: NoteSink
    ) -> Callable[[int, Any], None]:
        def step_done(step: int, model: Any) -> None:
            published = None
            if step % self.config.grpo.publish_every == 0:
                published = self.publisher.publish(model)
                self.result.published.append(published)
                note(f"published {published}")
            metrics = self.metrics(step, published)
            if published is not None:
                self.publisher.record(self.publisher.version, step=step, metrics=metrics.to_json())
            self.result.metrics.append(metrics)
            if on_metrics is not None:
                on_metrics(metrics)

        return step_done
