"""The GPU path: TRL's ``AsyncGRPOTrainer`` fed by :class:`TranscriptRolloutWorker`.

Publishing reuses TRL 1.16's adapter-only sync rather than :class:`AdapterPublisher`: when
the model is a plain LoRA and the vLLM server runs with ``--enable-lora``, every
``weight_sync_steps`` TRL saves the adapter under ``output_dir/.vllm_lora/{name}-v{N}``,
loads it with ``POST /v1/load_lora_adapter`` (never in place), calls the rollout worker's
``update_model_version(N)``, and unloads ``{name}-v{N - max_staleness - 1}``. TRL names the
adapter after its private ``_lora_name`` (``trl-policy``); it is set to the harness here, so
the versions are exactly :func:`~trainer._batching.adapter_name`'s ``{harness}-v{N}`` and
:func:`~trainer._batching.row_version` reads them back from the recorded turns. The worker's
``on_version`` hook (:meth:`AdapterPublisher.serving`, as on the CPU path) then repoints the
proxy's alias for the harness at the new version. TRL
publishes ``{harness}-v1`` (the untrained adapter) once before the first rollout.

TRL's sync would also pause vLLM (``/pause``) around every adapter save, which would stall
every harness the server serves: a new adapter name needs no pause (older versions keep
serving until unloaded), so the trainer's vLLM client here ignores pause and resume
(:class:`_NeverPause`). TRL probes ``/server_info`` at start-up, so the server needs
``VLLM_SERVER_DEV_MODE=1``. Without ``--enable-lora``
TRL would fall back to merging the adapter into the served base weights, which other
harnesses share; :func:`build_async_trainer` refuses that.

torch, trl and peft are imported only when a trainer is built, so this module imports on a
machine without them. Building and training need a CUDA GPU (TRL forces FlashAttention 3
kernels) and have not been run here: they are not covered by the test suite.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainer._async_worker import TranscriptRolloutWorker, quiet_trl_experimental
from trainer._batching import adapter_name
from trainer._models import hybrid_layers, report_to

if TYPE_CHECKING:
    from trl.experimental.async_grpo.async_grpo_config import AsyncGRPOConfig
    from trl.experimental.async_grpo.async_grpo_trainer import AsyncGRPOTrainer

    from trainer._train import Training

__all__ = ["async_grpo_config", "build_async_trainer", "train_async"]

logger = logging.getLogger("safeagents.trainer")

DEFAULT_HEARTBEAT_S = 1800.0
"""How long the trainer waits for a group before it calls the worker hung: the scheduler
releases groups on their time-out (``environment.group_timeout``), so set it above that."""


class _NeverPause:
    """TRL's vLLM client without ``pause``/``resume``: publishing ``{harness}-v{N}`` under a
    new name never needs the engine stopped, and other harnesses share the server."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def pause(self, *args: Any, **kwargs: Any) -> None:
        return None

    def resume(self, *args: Any, **kwargs: Any) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def async_grpo_config(
    training: Training,
    *,
    gradient_accumulation_steps: int = 4,
    heartbeat_stale_after_s: float = DEFAULT_HEARTBEAT_S,
) -> AsyncGRPOConfig:
    """TRL's settings from the trainer config (one optimiser step = that many micro-batches).

    TRL drops samples more than ``max_staleness`` versions old itself; it is given the
    serving window of the run's staleness rule, and the worker applies the rule exactly
    (in steps, where the config says so) before queueing."""
    with quiet_trl_experimental():
        from trl.experimental.async_grpo.async_grpo_config import AsyncGRPOConfig

    config = training.config
    grpo = config.grpo
    return AsyncGRPOConfig(
        output_dir=str(Path(config.output_dir) / training.harness),
        dtype="bfloat16",
        learning_rate=config.optimizer.learning_rate,
        weight_decay=config.optimizer.weight_decay,
        max_grad_norm=config.optimizer.max_grad_norm,
        lr_scheduler_type="constant",
        max_steps=grpo.max_steps,
        gradient_accumulation_steps=gradient_accumulation_steps,
        num_generations=grpo.group_size,
        temperature=config.sampling.temperature,
        max_completion_length=config.sampling.max_tokens_per_turn,
        max_staleness=grpo.staleness(first_trained=1).versions_kept,
        token_budget=grpo.token_budget,
        weight_sync_steps=grpo.publish_every,
        vllm_server_base_url=config.vllm.base_url.rstrip("/").removesuffix("/v1"),
        heartbeat_stale_after_s=heartbeat_stale_after_s,
        report_to=report_to(config),
        save_strategy="no",
        logging_steps=1,
    )


def build_async_trainer(
    training: Training,
    *,
    gradient_accumulation_steps: int = 4,
    heartbeat_stale_after_s: float = DEFAULT_HEARTBEAT_S,
) -> AsyncGRPOTrainer:
    """``AsyncGRPOTrainer`` for ``training``'s harness, with rollouts from its runner.

    Needs a CUDA GPU and a reachable vLLM server started with ``--enable-lora`` (adapter
    sync is probed at construction). Not exercised by the test suite.
    """
    from datasets import Dataset

    from trainer._trl import lora_config

    with quiet_trl_experimental():
        from trl.experimental.async_grpo.async_grpo_trainer import AsyncGRPOTrainer

    config = training.config
    tasks = list(training.tasks.values())
    built: list[AsyncGRPOTrainer] = []

    def current_step() -> int:
        return int(built[0].state.global_step) if built else 0

    def on_version(version: int) -> None:
        training.publisher.serving(version)
        if built:
            trainer = built[0]
            history = trainer.state.log_history
            training.publisher.record(
                version,
                step=current_step(),
                metrics=history[-1] if history else None,
                source=Path(trainer._lora_dir) / adapter_name(training.harness, version),
            )

    worker = TranscriptRolloutWorker(
        training.runner.scheduler().groups,
        tasks,
        scale_std=config.grpo.scale_std,
        staleness=config.grpo.staleness(first_trained=1),
        current_step=current_step,
        on_version=on_version,
    )
    trainer = AsyncGRPOTrainer(
        model=config.base_model,
        args=async_grpo_config(
            training,
            gradient_accumulation_steps=gradient_accumulation_steps,
            heartbeat_stale_after_s=heartbeat_stale_after_s,
        ),
        # Never read: the worker picks the tasks. TRL wants a prompt dataset all the same.
        train_dataset=Dataset.from_dict({"prompt": [task.prompt for task in tasks]}),
        peft_config=lora_config(config),
        rollout_worker=worker,
    )
    if not getattr(trainer, "_lora_sync", False):
        raise RuntimeError(
            "TRL chose merged-weight sync, which would overwrite the base model every harness "
            "shares: start vLLM with --enable-lora, VLLM_ALLOW_RUNTIME_LORA_UPDATING=True and "
            "VLLM_SERVER_DEV_MODE=1, and train a plain LoRA on a single data-parallel replica"
        )
    if not hasattr(trainer, "_lora_name"):
        raise RuntimeError("this TRL version no longer names adapters by _lora_name")
    trainer._lora_name = training.harness
    trainer.vllm_client = _NeverPause(trainer.vllm_client)  # type: ignore[assignment]
    built.append(trainer)
    return trainer


def refuse_hybrid(training: Training) -> None:
    """Raise for a model TRL's tree packing cannot train (see :mod:`trainer._models`)."""
    layers = hybrid_layers(training.config.base_model)
    if layers:
        raise ValueError(
            f"{training.config.base_model} has {sorted(layers)} layers, which TRL's async "
            "trainer cannot pack: train it with `safeagents train` (the transcript trainer)"
        )


def train_async(training: Training, **options: Any) -> AsyncGRPOTrainer:
    """Serve the base model to the harness, then train (TRL stops the worker at the end)."""
    refuse_hybrid(training)
    training.admin.set_alias(training.harness, training.base_name)
    try:
        trainer = build_async_trainer(training, **options)
        trainer.train()
    finally:
        training.close()
    return trainer


def main(argv: list[str] | None = None) -> int:
    """``python -m trainer._async CONFIG.yaml [--harness NAME] [--proxy-url URL]``."""
    from trainer._config import load_config
    from trainer._train import Training

    parser = argparse.ArgumentParser(prog="python -m trainer._async", description=main.__doc__)
    parser.add_argument("config", metavar="CONFIG.yaml")
    parser.add_argument("--harness", metavar="NAME")
    parser.add_argument("--proxy-url", metavar="URL")
    parser.add_argument("--gradient-accumulation-steps", type=int, default=4, metavar="N")
    args = parser.parse_args(argv)
    logging.basicConfig(level=os.environ.get("SAFEAGENTS_LOG_LEVEL", "INFO"))
    training = Training(load_config(args.config), harness=args.harness, proxy_url=args.proxy_url)
    if hybrid_layers(training.config.base_model):
        logger.warning("a hybrid model: training on the transcript trainer instead")
        training.run()
        return 0
    train_async(training, gradient_accumulation_steps=args.gradient_accumulation_steps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
