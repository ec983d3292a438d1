"""A training session's sampling parameters: validated, and enforced on a chat request."""

from __future__ import annotations

import pytest

from safeagents.protocols import Sampling, SamplingError


def test_the_enforced_request_samples_the_full_distribution_at_the_run_s_temperature() -> None:
    harness = {
        "model": "m",
        "messages": [],
        "temperature": 0.1,
        "top_p": 0.5,
        "top_k": 20,
        "min_p": 0.1,
        "presence_penalty": 1.5,
        "logit_bias": {"5": 100},
        "max_completion_tokens": 99,
        "reasoning_effort": "low",
        "chat_template_kwargs": {"custom": 1, "enable_thinking": False},
    }
    sent = Sampling(temperature=0.8, max_tokens=512).apply_chat(harness)
    assert (sent["temperature"], sent["top_p"], sent["top_k"], sent["min_p"]) == (0.8, 1.0, 0, 0.0)
    assert sent["presence_penalty"] == 0.0 and sent["repetition_penalty"] == 1.0
    assert sent["max_tokens"] == 512 and sent["n"] == 1
    for dropped in ("logit_bias", "max_completion_tokens", "reasoning_effort"):
        assert dropped not in sent
    assert sent["chat_template_kwargs"] == {"custom": 1, "enable_thinking": True, "thinking": True}
    off = Sampling(thinking=False).apply_chat(harness)
    assert off["chat_template_kwargs"]["enable_thinking"] is False


@pytest.mark.parametrize(
    "constraint",
    [
        {"response_format": {"type": "json_object"}},
        {"structured_outputs": {"regex": "a+"}},
        {"guided_choice": ["a"]},
        {"min_tokens": 5},
        {"ignore_eos": True},
        {"allowed_token_ids": [1, 2]},
    ],
)
def test_constrained_decoding_is_left_out(constraint: dict[str, object]) -> None:
    sent = Sampling().apply_chat({"model": "m", "messages": [], **constraint})
    assert not set(constraint) & set(sent)


def test_a_required_or_named_tool_choice_samples_freely() -> None:
    named = {"type": "function", "function": {"name": "bash"}}
    for choice, sent in (("required", "auto"), (named, "auto"), ("none", "none"), ("auto", "auto")):
        assert Sampling().apply_chat({"tool_choice": choice})["tool_choice"] == sent
    assert "tool_choice" not in Sampling().apply_chat({})


def test_sampling_round_trips_and_refuses_nonsense() -> None:
    sampling = Sampling(temperature=0.7, top_p=0.95, top_k=20, max_tokens=64, thinking=False)
    assert Sampling.from_json(sampling.to_json()) == sampling
    assert Sampling.from_json({}) == Sampling()
    for bad in (
        {"temperature": 0},
        {"top_p": 1.5},
        {"top_k": -1},
        {"max_tokens": 0},
        {"max_tokens": 1.5},
        {"thinking": "yes"},
        {"temperature": True},
        {"tempreature": 0.8},
        [0.8],
    ):
        with pytest.raises(SamplingError):
            Sampling.from_json(bad)
