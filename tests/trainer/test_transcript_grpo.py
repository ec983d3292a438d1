"""TRL's GRPO step on rows from transcripts: a tiny local Llama, LoRA rank 32, on CPU."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from datasets import Dataset  # noqa: E402
from peft import LoraConfig  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402
from trl import GRPOConfig  # noqa: E402

from trainer._advantages import Sample  # noqa: E402
from trainer._batching import MicroBatch  # noqa: E402
from trainer._grpo import (  # noqa: E402
    RatioStats,
    StepBatch,
    TranscriptGRPOTrainer,
    micro_batch_inputs,
)
from trainer._rows import Row  # noqa: E402
from trainer._tiny import build_tiny_lfm2, build_tiny_llama  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")


@pytest.fixture(scope="module", params=["llama", "lfm2"])
def tiny(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plain transformer, and a hybrid one (LFM2's convolutions), which TRL's async trainer
    refuses and the transcript trainer takes."""
    build = build_tiny_lfm2 if request.param == "lfm2" else build_tiny_llama
    return build(tmp_path_factory.mktemp(request.param))


def _row(prompt: Sequence[int], completion: Sequence[int], logprobs: Sequence[float]) -> Row:
    return Row(
        input_ids=(*prompt, *completion),
        loss_mask=(0,) * len(prompt) + (1,) * len(completion),
        logprobs=(0.0,) * len(prompt) + tuple(logprobs),
        session_id="s",
        harness="generic",
        task_id="t",
        models=("generic-v0",),
        turns=(0,),
    )


def _completion_logprobs(model: object, prompt: list[int], completion: list[int]) -> list[float]:
    ids = torch.tensor([prompt + completion])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0].float()  # type: ignore[operator]
    logps = torch.log_softmax(logits / 0.8, dim=-1)
    start = len(prompt)
    return [float(logps[start - 1 + i, token]) for i, token in enumerate(completion)]


def test_micro_batch_inputs_split_at_the_first_trained_token() -> None:
    context_inside = Row(
        input_ids=(5, 6, 7, 8, 9, 10),
        loss_mask=(0, 0, 1, 0, 1, 1),
        logprobs=(0.0, 0.0, -1.0, 0.0, -2.0, -3.0),
        session_id="s",
        harness="h",
        task_id="t",
        models=("h-v1", "h-v1"),
        turns=(0, 1),
    )
    short = _row([5], [6], [-0.5])
    batch = MicroBatch((Sample(context_inside, 1.0, 1.0), Sample(short, -1.0, 0.0)))
    inputs = micro_batch_inputs(batch, pad_token_id=0, num_items=5, device=torch.device("cpu"))
    assert inputs["prompt_ids"].tolist() == [[5, 6], [0, 5]]
    assert inputs["prompt_mask"].tolist() == [[1, 1], [0, 1]]
    assert inputs["completion_ids"].tolist() == [[7, 8, 9, 10], [6, 0, 0, 0]]
    assert inputs["completion_mask"].tolist() == [[1, 1, 1, 1], [1, 0, 0, 0]]
    assert inputs["tool_mask"].tolist() == [[1, 0, 1, 1], [1, 0, 0, 0]]
    assert inputs["old_per_token_logps"].tolist() == [[-1.0, 0.0, -2.0, -3.0], [-0.5, 0, 0, 0]]
    assert inputs["advantages"].tolist() == [1.0, -1.0]
    assert float(inputs["num_items_in_batch"]) == 5.0


def test_steps_move_the_adapter_towards_the_rewarded_completion(tiny: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    model = AutoModelForCausalLM.from_pretrained(tiny, dtype=torch.float32)
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "name colours"}], add_generation_prompt=True, tokenize=False
    )
    prompt = tokenizer.encode(text, add_special_tokens=False)
    good = tokenizer.encode("red blue green", add_special_tokens=False)
    bad = tokenizer.encode("one two three", add_special_tokens=False)
    base = {name: p.detach().clone() for name, p in model.named_parameters()}
    good_before = sum(_completion_logprobs(model, prompt, good))
    samples = [
        Sample(_row(prompt, good, _completion_logprobs(model, prompt, good)), 0.5, 1.0),
        Sample(_row(prompt, bad, _completion_logprobs(model, prompt, bad)), -0.5, 0.0),
    ]
    asked: list[list[str]] = []
    batches: list[StepBatch] = []

    def source(task_ids: Sequence[str]) -> StepBatch:
        asked.append(list(task_ids))
        batches.append(
            StepBatch([MicroBatch((samples[0],)), MicroBatch((samples[1],))], {"groups": 1})
        )
        return batches[-1]

    args = GRPOConfig(
        output_dir=str(tiny.parent / "out"),
        learning_rate=5e-3,
        lr_scheduler_type="constant",
        max_steps=4,
        num_generations=2,
        per_device_train_batch_size=2,
        temperature=0.8,
        loss_type="dapo",
        scale_rewards="none",
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
    )
    trainer = TranscriptGRPOTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list([{"prompt": "name colours", "task_id": "t"}]),
        processing_class=tokenizer,
        peft_config=LoraConfig(r=32, lora_alpha=64, target_modules="all-linear"),
        step_source=source,
    )
    trainer.train()

    assert asked == [["t"]] * 4
    assert trainer.last_loss is not None
    # step 1 scores the behaviour policy itself (the LoRA starts as the identity)
    first = batches[0].stats
    assert first["importance_ratio_mean"] == pytest.approx(1.0, abs=1e-5)
    assert 1 - 1e-4 < first["importance_ratio_min"] <= first["importance_ratio_max"] < 1 + 1e-4
    assert first["clip_fraction"] == 0.0
    assert abs(first["behaviour_kl"]) < 1e-6
    # the last step scores an updated policy against the same behaviour logprobs
    last = batches[-1].stats
    assert last["importance_ratio_max"] > 1.01 or last["importance_ratio_min"] < 0.99
    trained = trainer.model
    lora = {n: p for n, p in trained.named_parameters() if "lora_" in n}
    assert len(lora) > 0 and any(p.abs().sum() > 0 for n, p in lora.items() if "lora_B" in n)
    for name, param in trained.named_parameters():
        if "lora_" in name:
            continue
        original = name.replace("base_model.model.", "").replace(".base_layer", "")
        assert torch.equal(param.detach(), base[original]), name
    trained.eval()
    good_after = sum(_completion_logprobs(trained, prompt, good))
    assert good_after > good_before + 0.1


def test_ratio_statistics_count_only_trained_tokens_and_the_clip_region() -> None:
    stats = RatioStats()
    old = torch.zeros((2, 3))
    logps = torch.log(torch.tensor([[1.0, 1.5, 9.0], [0.5, 1.0, 9.0]]))
    mask = torch.tensor([[1, 1, 0], [1, 1, 0]])
    # sample 0 gains (1.5 > 1.2 with a positive advantage: clipped); sample 1 loses (0.5 < 0.8
    # with a negative advantage: clipped); the 9.0s are context and count for nothing
    stats.add(logps, old, mask, torch.tensor([1.0, -1.0]), epsilon_low=0.2, epsilon_high=0.2)
    result = stats.to_stats()
    assert result["importance_ratio_mean"] == pytest.approx(1.0)
    assert result["importance_ratio_min"] == pytest.approx(0.5)
    assert result["importance_ratio_max"] == pytest.approx(1.5)
    assert result["clip_fraction"] == pytest.approx(0.5)
    k3 = [(r - 1) - math.log(r) for r in (1.0, 1.5, 0.5, 1.0)]
    assert result["behaviour_kl"] == pytest.approx(sum(k3) / 4)
    # the same ratios with the advantages' signs swapped are not held back
    swapped = RatioStats()
    swapped.add(logps, old, mask, torch.tensor([-1.0, 1.0]), epsilon_low=0.2, epsilon_high=0.2)
    assert swapped.to_stats()["clip_fraction"] == 0.0
    assert RatioStats().to_stats()["importance_ratio_mean"] is None
