"""What a base model needs from the trainer: which training path can take it, which vLLM tool
parser reads its tool calls, and where TRL reports metrics.

TRL's async trainer packs samples as a tree under FlashAttention, which only attention
layers can follow; a hybrid model (LFM2's short convolutions, Mamba or linear-attention
layers in ``layer_types``) would mix samples, so it trains on the transcript trainer
(:class:`~trainer._train.Training`), which pads each sample separately.

Everything here reads local files only: on an offline GPU machine the model directory (or
the Hugging Face cache) must already hold the config, tokenizer and weights.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from trainer._config import TrainerConfig

__all__ = [
    "ATTENTION_LAYERS",
    "hybrid_layers",
    "model_type",
    "report_to",
    "tool_parser_for",
]

ATTENTION_LAYERS = frozenset({"full_attention", "sliding_attention"})
_TOOL_PARSERS = {"lfm2": "lfm2", "lfm2_moe": "lfm2", "lfm2_vl": "lfm2"}
"""vLLM's ``--tool-call-parser`` by model type; ``hermes`` for the rest (Qwen and the like)."""
_DEFAULT_TOOL_PARSER = "hermes"
_TRACKERS = {"tensorboard": "tensorboard", "trackio": "trackio"}


def _text_config(model: str | Path) -> object:
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(model), local_files_only=True)
    get_text = getattr(config, "get_text_config", None)
    return get_text() if callable(get_text) else config


def model_type(model: str | Path) -> str:
    """The ``model_type`` of ``model``'s (text) config."""
    return str(getattr(_text_config(model), "model_type", "") or "")


def hybrid_layers(model: str | Path) -> frozenset[str]:
    """The layer types of ``model`` that are not attention (empty for a plain transformer)."""
    declared = getattr(_text_config(model), "layer_types", None) or ()
    return frozenset(str(kind) for kind in declared) - ATTENTION_LAYERS


def tool_parser_for(model: str | Path) -> str:
    """vLLM's tool-call parser for ``model``: ``lfm2`` for the LFM family, else ``hermes``."""
    return _TOOL_PARSERS.get(model_type(model), _DEFAULT_TOOL_PARSER)


def report_to(config: TrainerConfig) -> list[str]:
    """TRL's ``report_to`` for ``config.report_to``: ``auto`` is TensorBoard or trackio,
    whichever is installed (none of them: the JSONL only). A tracker named explicitly but not
    installed is an error, not a silent no-op."""
    choice = config.report_to
    if choice == "none":
        return []
    if choice == "auto":
        for name, module in _TRACKERS.items():
            if importlib.util.find_spec(module) is not None:
                return [name]
        return []
    if importlib.util.find_spec(_TRACKERS[choice]) is None:
        raise ValueError(f"report_to is {choice!r} but {_TRACKERS[choice]} is not installed")
    return [choice]
