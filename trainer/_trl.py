"""Building TRL's trainer from a trainer config (model, LoRA, settings) and a step source."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from datasets import Dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
from transformers.trainer_callback import PrinterCallback, ProgressCallback
from trl.trainer.grpo_config import GRPOConfig

from trainer._config import TrainerConfig
from trainer._environment import Task
from trainer._grpo import StepSource, TranscriptGRPOTrainer
from trainer._models import report_to

__all__ = ["build_trainer", "grpo_config", "lora_config"]

StepDone = Callable[[int, Any], None]


def lora_config(config: TrainerConfig) -> LoraConfig:
    lora = config.lora
    targets: Any = lora.target_modules
    return LoraConfig(
        r=lora.rank,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=targets if isinstance(targets, str) else list(targets),
        task_type="CAUSAL_LM",
    )


def grpo_config(config: TrainerConfig) -> GRPOConfig:
    grpo = config.grpo
    gpu = torch.cuda.is_available()
    return GRPOConfig(
        output_dir=str(config.output_dir),
        learning_rate=config.optimizer.learning_rate,
        weight_decay=config.optimizer.weight_decay,
        max_grad_norm=config.optimizer.max_grad_norm,
        lr_scheduler_type="constant",
        max_steps=grpo.max_steps,
        num_generations=grpo.group_size,
        per_device_train_batch_size=grpo.group_size * grpo.tasks_per_step,
        gradient_accumulation_steps=1,
        steps_per_generation=1,
        num_iterations=1,
        temperature=config.sampling.temperature,
        max_completion_length=config.sampling.max_tokens_per_turn,
        loss_type="dapo",
        scale_rewards="group" if grpo.scale_std else "none",
        beta=0.0,
        bf16=gpu,
        gradient_checkpointing=gpu,
        use_vllm=False,
        report_to=report_to(config),
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )


class _StepCallback(TrainerCallback):
    def __init__(self, on_step: StepDone) -> None:
        self.on_step = on_step

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.on_step(int(state.global_step), kwargs["model"])


def build_trainer(
    config: TrainerConfig, tasks: Sequence[Task], *, step_source: StepSource, on_step: StepDone
) -> TranscriptGRPOTrainer:
    gpu = torch.cuda.is_available()
    tokenizer = AutoTokenizer.from_pretrained(config.base_model)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        config.base_model, dtype=torch.bfloat16 if gpu else torch.float32
    )
    dataset = Dataset.from_list([{"prompt": task.prompt, "task_id": task.id} for task in tasks])
    trainer = TranscriptGRPOTrainer(
        model=model,
        args=grpo_config(config),
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=lora_config(config),
        callbacks=[_StepCallback(on_step)],
        step_source=step_source,
    )
    for printer in (PrinterCallback, ProgressCallback):  # the live view reports progress
        trainer.remove_callback(printer)
    return trainer
