"""The tiny local Llama: saved, loaded back by transformers, chat-templated, deterministic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trainer._tiny import SPECIAL_TOKENS, TINY_WORDS, build_tiny_llama

pytest.importorskip("transformers", reason="the train extra is not installed")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llama(tmp_path_factory.mktemp("tiny") / "model")


def _load(directory: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(directory), AutoModelForCausalLM.from_pretrained(directory)


def test_the_model_has_the_shape_vllm_cpu_needs(tiny: Path) -> None:
    tokenizer, model = _load(tiny)
    config = model.config
    assert config.model_type == "llama"
    assert (config.hidden_size, config.num_hidden_layers, config.intermediate_size) == (128, 2, 256)
    assert (config.num_attention_heads, config.num_key_value_heads, config.head_dim) == (2, 2, 64)
    assert config.vocab_size == len(tokenizer) and 100 <= len(tokenizer) <= 300
    assert not config.tie_word_embeddings
    assert str(model.dtype) == "torch.float32"
    stops = {tokenizer.convert_tokens_to_ids("<|im_end|>"), tokenizer.eos_token_id}
    assert set(model.generation_config.eos_token_id) == stops


def test_the_tokenizer_has_the_special_tokens_and_round_trips_text(tiny: Path) -> None:
    tokenizer, _ = _load(tiny)
    assert tokenizer.convert_ids_to_tokens(list(range(len(SPECIAL_TOKENS)))) == list(SPECIAL_TOKENS)
    assert (tokenizer.pad_token, tokenizer.eos_token) == ("<|pad|>", "<|eos|>")
    text = 'answer: red, blue and 42 ?\n<tool_call>{"name": "bash"}</tool_call>'
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert tokenizer.unk_token_id not in ids
    assert tokenizer.decode(ids) == text
    assert tokenizer.convert_tokens_to_ids(["yes", "no", "red", "7"]) == [
        tokenizer.get_vocab()[word] for word in ("yes", "no", "red", "7")
    ]
    assert set(TINY_WORDS) <= set(tokenizer.get_vocab())
    unknown = tokenizer("the sky", add_special_tokens=False)["input_ids"]
    assert unknown[-1] == tokenizer.unk_token_id


def test_the_chat_template_is_chatml_with_a_generation_prompt(tiny: Path) -> None:
    tokenizer, _ = _load(tiny)
    messages = [
        {"role": "system", "content": "say yes or no"},
        {"role": "user", "content": [{"type": "text", "text": "is red a color ?"}]},
    ]
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert text == (
        "<|im_start|>system\nsay yes or no<|im_end|>\n"
        "<|im_start|>user\nis red a color ?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert ids[0] == tokenizer.convert_tokens_to_ids("<|im_start|>")
    assert tokenizer.unk_token_id not in ids


def test_the_weights_follow_the_seed(tmp_path: Path, tiny: Path) -> None:
    import torch

    again = build_tiny_llama(tmp_path / "again")
    other = build_tiny_llama(tmp_path / "other", seed=1)
    weights = [_load(path)[1].lm_head.weight for path in (tiny, again, other)]
    assert torch.equal(weights[0], weights[1])
    assert not torch.equal(weights[0], weights[2])


def test_the_model_generates_from_a_chat_prompt(tiny: Path) -> None:
    import torch

    tokenizer, model = _load(tiny)
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "count to 3"}], add_generation_prompt=True, return_dict=True
    )
    inputs = torch.tensor([prompt["input_ids"]])
    output = model.generate(inputs, max_new_tokens=4, do_sample=False)
    assert output.shape[1] <= inputs.shape[1] + 4
    assert torch.equal(output[0, : inputs.shape[1]], inputs[0])
