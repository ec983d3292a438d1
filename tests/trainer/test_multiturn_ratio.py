"""Issue 13's on-policy proof on multi-turn rows of a real harness: the tiny agent (the tiny
Llama fine-tuned on pi's own conversations, tests/trainer/agent_kit.py) drives pi in the
local sandbox through the proxy (token capture on) and vLLM on CPU, calling ``bash ls`` and
answering after its output; one GRPO step trains on those sessions.

Asserted from the store, the rows and the step's metrics: the sessions took two model turns,
linked into one row each (no fork); the rows' masks cover exactly the sampled completions;
and at the first step (no optimiser step yet) the trained policy is the behaviour policy:
importance ratio 1 within float tolerance on every trained token, KL 0, nothing clipped,
with the run's sampling (temperature 0.7, not 1) enforced on every turn."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_kit import build_pi_agent
from harness_env_kit import require_harness
from sandbox_kit import require_sandbox
from tasks.tiny_repo_kit import make_repo
from trainer_testkit import Spread, stored_sessions
from vllm_kit import proxied, require_vllm

from safeagents.cli import main
from safeagents.proxy import ProxyServer
from trainer import TrainerConfig, load_reward

pytest.importorskip("torch")
pytest.importorskip("trl")

from trainer._rows import Row, build_rows
from trainer._sandbox_env import SandboxEnvironment
from trainer._train import Training
from trainer._vllm import VLLMServer

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning"),
]

HARNESS = "pi"
GROUP = 4


@pytest.fixture
def environment(tmp_path: Path) -> SandboxEnvironment:
    """pi in the local sandbox on one question about a small repository."""
    tasks = tmp_path / "tasks"
    repo = make_repo(tmp_path / "repos" / "calc")
    argv = ["tasks", "generate", "--repo", str(repo), "--out", str(tasks), "--classes", "qa"]
    assert main([*argv, "--limit", "1"]) == 0
    return SandboxEnvironment(harness=HARNESS, tasks_dir=tasks)


@pytest.fixture
def served(
    environment: SandboxEnvironment, tmp_path: Path
) -> Iterator[tuple[TrainerConfig, VLLMServer, ProxyServer]]:
    require_vllm()
    require_harness(HARNESS)
    require_sandbox()
    model, fitted = build_pi_agent(tmp_path, [task.prompt for task in environment.tasks()])
    assert fitted.loss < 0.01, fitted
    config = TrainerConfig.model_validate(
        {
            "base_model": str(model),
            "harnesses": [HARNESS],
            "output_dir": str(tmp_path / "runs"),
            "sampling": {"temperature": 0.7, "max_tokens_per_turn": 64},
            "grpo": {"group_size": GROUP, "max_steps": 1, "publish_every": 1},
            "vllm": {"served_model": "tiny"},
            "proxy": {"store": str(tmp_path / "sa.db")},
            "report_to": "none",
        }
    )
    with proxied(config, model, tmp_path, max_model_len=16_384) as served:
        yield served


def test_the_first_step_on_multi_turn_pi_rows_is_on_policy(
    environment: SandboxEnvironment, served: tuple[TrainerConfig, VLLMServer, ProxyServer]
) -> None:
    config, vllm, _proxy = served
    with vllm.admin() as admin:
        training = Training(config, environment=environment, server=admin)
        training.runner.reward = load_reward(entry_points=False, plugins=[Spread()])
        result = training.run()

    sessions = asyncio.run(stored_sessions(config.proxy.store))
    assert len(sessions) == GROUP
    rows: list[Row] = []
    for session, turns in sessions.values():
        model_turns = [turn for turn in turns if turn.kind != "side"]
        built = build_rows(turns, sampling=config.sampling.enforced)
        assert built.excluded == {} and built.forks == 0, (session.id, built)
        rows += built.rows
        # The row holds every model turn, context untrained, each completion trained as sampled.
        (row,) = built.rows
        assert len(row.turns) == len(model_turns)
        last = model_turns[-1].tokens
        assert last is not None
        assert row.input_ids[: len(last.prompt_token_ids)] == last.prompt_token_ids
        trained = [token for token, on in zip(row.input_ids, row.loss_mask, strict=True) if on]
        completions = [
            token
            for turn in model_turns
            if turn.tokens
            for token in turn.tokens.completion_token_ids
        ]
        assert trained == completions
    multi = [row for row in rows if len(row.turns) >= 2]
    assert len(multi) >= GROUP // 2, [len(row.turns) for row in rows]

    (first,) = result.metrics
    assert first.refused_sampling == 0 and first.forks == 0
    assert first.samples == len(rows)
    assert first.tokens == sum(row.num_trained for row in rows)
    # float32 on both sides: every trained token's ratio is 1 to about 1e-6.
    assert first.importance_ratio_mean == pytest.approx(1.0, abs=1e-5)
    assert first.importance_ratio_min is not None and first.importance_ratio_min > 1 - 1e-4
    assert first.importance_ratio_max is not None and first.importance_ratio_max < 1 + 1e-4
    assert first.clip_fraction == 0.0
    assert first.behaviour_kl is not None and abs(first.behaviour_kl) < 1e-6
