"""A training session's sampling parameters, enforced on the Chat Completions request sent
upstream whatever the harness asked for, and recorded with every turn they produced.

Off-policy correction compares the engine's behaviour logprobs with the trainer's at the
same temperature, over the full vocabulary: anything else that reshapes the distribution
(penalties, ``min_p``, a logit bias, the model's own generation defaults such as top-k 20,
constrained decoding: response formats, ``min_tokens``, a required or named tool choice)
biases the importance ratio, so it is set to its neutral value or left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._common import JSONObject, as_dict

__all__ = ["THINKING_KWARGS", "Sampling", "SamplingError"]

_NEUTRAL: JSONObject = {
    "min_p": 0.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "repetition_penalty": 1.0,
    "n": 1,
}
_DROPPED = (
    "logit_bias",
    "max_completion_tokens",
    "reasoning_effort",
    "seed",
    # constrained decoding masks tokens the trainer's softmax does not
    "response_format",
    "structured_outputs",
    "guided_json",
    "guided_regex",
    "guided_choice",
    "guided_grammar",
    "allowed_token_ids",
    "bad_words",
    "min_tokens",
    "ignore_eos",
    "logits_processors",
)
THINKING_KWARGS = ("enable_thinking", "thinking")
"""Chat-template switches for reasoning (Qwen3/GLM spell it ``enable_thinking``, others
``thinking``); a template ignores the one it does not know."""


class SamplingError(ValueError):
    """Sampling parameters that are not a valid setting."""


@dataclass(frozen=True, slots=True)
class Sampling:
    """What every upstream request of a training session samples with.

    ``top_k`` 0 and ``top_p`` 1.0 mean the full distribution; ``max_tokens`` is per turn;
    ``thinking`` switches the chat template's reasoning on or off."""

    temperature: float = 0.8
    top_p: float = 1.0
    top_k: int = 0
    max_tokens: int = 32_768
    thinking: bool = True

    def __post_init__(self) -> None:
        if not (math.isfinite(self.temperature) and self.temperature > 0.0):
            raise SamplingError(f"temperature must be > 0, got {self.temperature!r}")
        if not (math.isfinite(self.top_p) and 0.0 < self.top_p <= 1.0):
            raise SamplingError(f"top_p must be within (0, 1], got {self.top_p!r}")
        if self.top_k < 0:
            raise SamplingError(f"top_k must be 0 (off) or positive, got {self.top_k!r}")
        if self.max_tokens <= 0:
            raise SamplingError(f"max_tokens must be positive, got {self.max_tokens!r}")

    def to_json(self) -> JSONObject:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "max_tokens": self.max_tokens,
            "thinking": self.thinking,
        }

    @classmethod
    def from_json(cls, data: Any) -> Sampling:
        """Read :meth:`to_json`'s object (missing keys take the defaults); ``SamplingError``
        names the first bad or unknown key."""
        if not isinstance(data, Mapping):
            raise SamplingError("sampling must be a JSON object")
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise SamplingError(f"unknown sampling key {unknown[0]!r}")
        values: dict[str, Any] = {}
        for name, kind in (
            ("temperature", float),
            ("top_p", float),
            ("top_k", int),
            ("max_tokens", int),
            ("thinking", bool),
        ):
            if name not in data:
                continue
            value = data[name]
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            if kind is bool and not isinstance(value, bool):
                raise SamplingError(f"sampling {name!r} must be true or false")
            if kind is int and not (numeric and float(value).is_integer()):
                raise SamplingError(f"sampling {name!r} must be an integer")
            if kind is float and not numeric:
                raise SamplingError(f"sampling {name!r} must be a number")
            values[name] = kind(value)
        return cls(**values)

    def apply_chat(self, body: Mapping[str, Any]) -> JSONObject:
        """A Chat Completions request ``body`` sampling exactly with these parameters."""
        request = {key: value for key, value in body.items() if key not in _DROPPED}
        request.update(_NEUTRAL)
        request["temperature"] = self.temperature
        request["top_p"] = self.top_p
        request["top_k"] = self.top_k
        request["max_tokens"] = self.max_tokens
        kwargs = dict(as_dict(request.get("chat_template_kwargs")))
        kwargs.update(dict.fromkeys(THINKING_KWARGS, self.thinking))
        request["chat_template_kwargs"] = kwargs
        if request.get("tool_choice") not in (None, "auto", "none"):
            request["tool_choice"] = "auto"  # "required" and named tools decode constrained
        return request
