"""GRPO steps on rows read from transcripts, with TRL's loss, optimiser and PEFT machinery.

:class:`TranscriptGRPOTrainer` is TRL's ``GRPOTrainer`` with generation replaced: a step asks
a :class:`StepSource` for the micro-batches of the tasks TRL sampled (rollouts run by the
agents through the proxy, scored, grouped, staleness-filtered and token-budget packed by the
pure data path), then runs TRL's clipped-surrogate loss on each micro-batch with the engine's
own behaviour logprobs as the old policy.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from trl.trainer.grpo_trainer import GRPOTrainer

from trainer._batching import MicroBatch

__all__ = [
    "RatioStats",
    "StepBatch",
    "StepSource",
    "TranscriptGRPOTrainer",
    "micro_batch_inputs",
    "unused_reward",
]


@dataclass(slots=True)
class StepBatch:
    """The micro-batches of one optimiser step and what the step's rollouts looked like."""

    micro_batches: list[MicroBatch]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def trained_tokens(self) -> int:
        return sum(batch.num_trained for batch in self.micro_batches)


@dataclass(slots=True)
class RatioStats:
    """Importance ratios ``exp(logp_new - logp_behaviour)`` over a step's trained tokens,
    the fraction of them TRL's clip region holds back (ratio below ``1 - eps_low`` with a
    negative advantage, or above ``1 + eps_high`` with a positive one), and the k3 estimate
    ``(r - 1) - log r`` of the KL between behaviour and trained policy (TRL's async ``kl``)."""

    tokens: int = 0
    total: float = 0.0
    kl: float = 0.0
    low: float = math.inf
    high: float = -math.inf
    clipped: int = 0

    def add(
        self,
        logps: torch.Tensor,
        old_logps: torch.Tensor,
        mask: torch.Tensor,
        advantages: torch.Tensor,
        *,
        epsilon_low: float,
        epsilon_high: float,
    ) -> None:
        """Take in one micro-batch (``(B, T)`` tensors; ``advantages`` ``(B,)``)."""
        trained = mask.bool()
        if not bool(trained.any()):
            return
        log_ratio = logps.detach().float() - old_logps.float()
        ratio = torch.exp(log_ratio)
        advantage = advantages.reshape(-1, 1).expand_as(ratio)
        clipped = ((ratio < 1 - epsilon_low) & (advantage < 0)) | (
            (ratio > 1 + epsilon_high) & (advantage > 0)
        )
        values = ratio[trained]
        self.tokens += int(values.numel())
        self.total += float(values.sum().item())
        self.kl += float(((values - 1) - log_ratio[trained]).sum().item())
        self.low = min(self.low, float(values.min().item()))
        self.high = max(self.high, float(values.max().item()))
        self.clipped += int(clipped[trained].sum().item())

    def to_stats(self) -> dict[str, float | None]:
        if not self.tokens:
            return dict.fromkeys(_RATIO_KEYS)
        return {
            "importance_ratio_mean": self.total / self.tokens,
            "importance_ratio_min": self.low,
            "importance_ratio_max": self.high,
            "clip_fraction": self.clipped / self.tokens,
            "behaviour_kl": self.kl / self.tokens,
        }


_RATIO_KEYS = (
    "importance_ratio_mean",
    "importance_ratio_min",
    "importance_ratio_max",
    "clip_fraction",
    "behaviour_kl",
)


StepSource = Callable[[Sequence[str]], StepBatch]
"""Task ids (each once, in TRL's sampled order) to the step's micro-batches."""


def unused_reward(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
    """TRL requires a reward function; rewards here come from transcripts, never from this."""
    raise RuntimeError("transcript rewards are read from the store, not computed by TRL")


def _split(input_ids: Sequence[int], loss_mask: Sequence[int]) -> int:
    """Where the completion starts: the first trained token (TRL computes logits from there)."""
    for index, trained in enumerate(loss_mask):
        if trained:
            return index
    return len(input_ids)


def micro_batch_inputs(
    batch: MicroBatch, *, pad_token_id: int, num_items: int, device: torch.device
) -> dict[str, torch.Tensor]:
    """TRL's batch layout for ``batch``: left-padded prompts, right-padded completions; context
    tokens inside a completion are masked through ``tool_mask``; ``old_per_token_logps`` are
    the behaviour logprobs the engine reported."""
    prompts: list[list[int]] = []
    completions: list[list[int]] = []
    masks: list[list[int]] = []
    logprobs: list[list[float]] = []
    for sample in batch.samples:
        row = sample.row
        start = _split(row.input_ids, row.loss_mask)
        prompts.append(list(row.input_ids[:start]))
        completions.append(list(row.input_ids[start:]))
        masks.append(list(row.loss_mask[start:]))
        logprobs.append(list(row.logprobs[start:]))
    prompt_width = max(len(ids) for ids in prompts)
    width = max(len(ids) for ids in completions)
    size = len(batch.samples)
    prompt_ids = torch.full((size, prompt_width), pad_token_id, dtype=torch.long)
    prompt_mask = torch.zeros((size, prompt_width), dtype=torch.long)
    completion_ids = torch.full((size, width), pad_token_id, dtype=torch.long)
    completion_mask = torch.zeros((size, width), dtype=torch.long)
    tool_mask = torch.zeros((size, width), dtype=torch.long)
    old_logps = torch.zeros((size, width), dtype=torch.float32)
    for i, (prompt, completion) in enumerate(zip(prompts, completions, strict=True)):
        if prompt:
            prompt_ids[i, prompt_width - len(prompt) :] = torch.tensor(prompt)
            prompt_mask[i, prompt_width - len(prompt) :] = 1
        completion_ids[i, : len(completion)] = torch.tensor(completion)
        completion_mask[i, : len(completion)] = 1
        tool_mask[i, : len(completion)] = torch.tensor(masks[i])
        old_logps[i, : len(completion)] = torch.tensor(logprobs[i])
    advantages = torch.tensor([sample.advantage for sample in batch.samples], dtype=torch.float32)
    return {
        "prompt_ids": prompt_ids.to(device),
        "prompt_mask": prompt_mask.to(device),
        "completion_ids": completion_ids.to(device),
        "completion_mask": completion_mask.to(device),
        "tool_mask": tool_mask.to(device),
        "old_per_token_logps": old_logps.to(device),
        "advantages": advantages.to(device),
        "num_items_in_batch": torch.tensor(float(num_items), device=device),
    }


class TranscriptGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` whose generation is the agents' rollouts, read from transcripts."""

    def __init__(self, *args: Any, step_source: StepSource, **kwargs: Any) -> None:
        kwargs.setdefault("reward_funcs", unused_reward)
        super().__init__(*args, **kwargs)
        self.step_source = step_source
        self.last_batch: StepBatch | None = None
        self.last_loss: float | None = None
        self.last_step_seconds = 0.0
        self._last_logps: torch.Tensor | None = None

    def _get_per_token_logps_and_entropies(self, *args: Any, **kwargs: Any) -> Any:
        """TRL's, keeping the policy's logprobs for the step's importance-ratio statistics."""
        result = super()._get_per_token_logps_and_entropies(*args, **kwargs)
        self._last_logps = result[0]
        return result

    def _task_ids(self, inputs: Sequence[dict[str, Any]]) -> list[str]:
        seen: dict[str, None] = {}
        for example in inputs:
            seen.setdefault(str(example["task_id"]), None)
        return list(seen)

    def training_step(
        self,
        model: torch.nn.Module,
        inputs: Any,
        num_items_in_batch: torch.Tensor | int | None = None,
    ) -> torch.Tensor:
        started = time.perf_counter()
        model.train()
        optimizer: Any = self.optimizer
        if hasattr(optimizer, "train") and callable(optimizer.train):
            optimizer.train()
        batch = self.step_source(self._task_ids(inputs))
        device = self.accelerator.device
        total = torch.zeros((), device=device)
        num_items = batch.trained_tokens
        pad = int(getattr(self.processing_class, "pad_token_id", 0) or 0)
        ratios = RatioStats()
        for micro in batch.micro_batches:
            micro_inputs = micro_batch_inputs(
                micro, pad_token_id=pad, num_items=num_items, device=device
            )
            with self.compute_loss_context_manager():
                loss: torch.Tensor = self._compute_loss(  # type: ignore[no-untyped-call]
                    model, micro_inputs
                )
            self.accelerator.backward(loss)
            total = total + loss.detach()
            if self._last_logps is not None:
                ratios.add(
                    self._last_logps,
                    micro_inputs["old_per_token_logps"],
                    micro_inputs["completion_mask"] * micro_inputs["tool_mask"],
                    micro_inputs["advantages"],
                    epsilon_low=self.epsilon_low,
                    epsilon_high=self.epsilon_high,
                )
                self._last_logps = None
        batch.stats.update(ratios.to_stats())
        self._step += 1
        self.last_batch = batch
        self.last_loss = float(total.item()) if batch.micro_batches else None
        self.last_step_seconds = time.perf_counter() - started
        return total
