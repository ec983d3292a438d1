"""Standalone rollout runs: ``N`` rollouts of every task of an environment through the proxy,
scheduled continuously, one JSONL line per rollout, resumable.

A stopped run started again with the same results file runs only the rollouts it has no
line for (a half-written last line is ignored); the session ids of the new ones are fresh.
Rollouts that failed (harness crash, time-out, sandbox failure) have their line, with their
``status``, and are not run again: they are counted, never scored.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from safeagents.store import Store
from trainer._config import TrainerConfig
from trainer._environment import Environment, Task
from trainer._jsonl import JsonlLog
from trainer._reward import load_reward
from trainer._runner import ProxyAdmin, RolloutRunner
from trainer._scheduler import RolloutResult

__all__ = ["ResultsLog", "RunSummary", "drive", "runner_from_config"]

logger = logging.getLogger("safeagents.trainer")


def runner_from_config(
    config: TrainerConfig,
    environment: Environment,
    *,
    store: Store,
    proxy_url: str | None = None,
    model: str | None = None,
    group_size: int | None = None,
    concurrency: int | None = None,
) -> RolloutRunner:
    """The rollout runner ``config`` describes (its environment section, proxy and reward)."""
    token = os.environ.get(config.proxy.admin_token_env) or None
    settings = config.environment
    base_name = config.vllm.served_model or config.base_model
    return RolloutRunner(
        environment,
        proxy_url=proxy_url or config.proxy.admin_url.rsplit("/safeagents/", 1)[0],
        admin=ProxyAdmin(config.proxy.admin_url, token=token),
        store=store,
        reward=load_reward(
            tool_call_bonus=config.reward.tool_call_bonus,
            tool_call_horizon=config.reward.tool_call_horizon,
        ),
        group_size=group_size or config.grpo.group_size,
        model=model or (settings.model if settings and settings.model else None) or base_name,
        temperature=config.sampling.temperature,
        max_tokens=config.sampling.max_tokens_per_turn,
        concurrency=concurrency or (settings.concurrency if settings else 48),
        group_timeout=settings.group_timeout if settings else None,
        sampling=config.sampling.enforced,
    )


class ResultsLog(JsonlLog):
    """The JSONL file of a rollout run: read back to resume, appended and flushed per line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.skipped = 0
        """Lines that could not be read (a run killed mid-line)."""
        self.previous: list[dict[str, Any]] = self._read()
        super().__init__(path, "results log")

    def _read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        lines: list[dict[str, Any]] = []
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                    if not isinstance(data, dict) or not isinstance(data.get("task_id"), str):
                        raise ValueError("not a rollout line")
                    int(data["index"])
                except (ValueError, KeyError, TypeError) as problem:
                    self.skipped += 1
                    logger.warning("%s:%d: skipped (%s)", self.path, number, problem)
                    continue
                lines.append(data)
        return lines

    def done(self) -> dict[str, frozenset[int]]:
        """The rollouts already recorded, as rollout indices per task."""
        found: dict[str, set[int]] = {}
        for line in self.previous:
            found.setdefault(line["task_id"], set()).add(int(line["index"]))
        return {task: frozenset(indices) for task, indices in found.items()}

    def append(self, result: RolloutResult, **extra: Any) -> None:
        self.write({**result.to_json(), **extra})


@dataclass(slots=True)
class RunSummary:
    """What a rollout run did, this time and before (``resumed``)."""

    statuses: Counter[str] = field(default_factory=Counter)
    resumed: int = 0
    """Rollouts recorded by an earlier run and not run again."""
    reward_sum: float = 0.0
    successes: int = 0
    tool_calls: int = 0
    hacks: int = 0
    timed_out_groups: int = 0
    peak_live: int = 0

    @property
    def ran(self) -> int:
        return sum(self.statuses.values())

    @property
    def scored(self) -> int:
        return self.statuses["scored"]

    def add(self, result: RolloutResult) -> None:
        self.statuses[result.status] += 1
        rollout = result.rollout
        if rollout is not None:
            self.tool_calls += rollout.tool_calls
            self.hacks += rollout.hacked
            if rollout.reward is not None:
                self.reward_sum += rollout.reward
                self.successes += bool(rollout.success)

    def as_dict(self) -> Mapping[str, Any]:
        return {
            "ran": self.ran,
            "resumed": self.resumed,
            "statuses": dict(sorted(self.statuses.items())),
            "reward_mean": self.reward_sum / self.scored if self.scored else None,
            "success_rate": self.successes / self.scored if self.scored else None,
            "tool_calls_mean": self.tool_calls / self.ran if self.ran else None,
            "hacks": self.hacks,
            "timed_out_groups": self.timed_out_groups,
            "peak_live_sessions": self.peak_live,
        }


async def drive(
    runner: RolloutRunner,
    tasks: Sequence[Task],
    log: ResultsLog,
    *,
    on_start: Callable[[Task, int], None] | None = None,
    on_result: Callable[[RolloutResult], None] | None = None,
) -> RunSummary:
    """Run ``runner.group_size`` rollouts of each task but those ``log`` already has."""
    summary = RunSummary()
    done = log.done()
    summary.resumed = sum(len(indices & set(range(runner.group_size))) for indices in done.values())
    harness = runner.environment.harness

    def record(result: RolloutResult) -> None:
        log.append(result, harness=harness)
        summary.add(result)
        if on_result is not None:
            on_result(result)

    scheduler = runner.scheduler(on_result=record, on_start=on_start)
    async for released in scheduler.groups(tasks, skip=done):
        summary.timed_out_groups += released.timed_out
    summary.peak_live = scheduler.peak
    return summary
