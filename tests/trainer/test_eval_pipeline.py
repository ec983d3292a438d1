"""The pipeline end to end on CPU: tasks generated from a small repository and validated, a
few GRPO steps of the tiny model through pi in the local sandbox (vLLM, the proxy with token
capture), then ``safeagents eval`` of the base model and the two published adapter versions
on the held-out tasks. What is asserted is the pipeline's facts (tasks validated, sessions
scored, adapters served under their names, report written), not accuracy: a random tiny
model fixes nothing. The training run also checks that the run's sampling was enforced on
every turn pi took, and that at the first step (no optimiser step yet) the importance ratio
is 1 within float tolerance; the random model's sessions are one turn, so multi-turn rows
are checked with a fine-tuned agent in tests/trainer/test_multiturn_ratio.py.

pi asks for 8192 tokens a turn; vLLM serves the tiny model with a 16k context so that its
requests fit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
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

from trainer._sandbox_env import SandboxEnvironment
from trainer._tiny import build_tiny_llama
from trainer._train import Training
from trainer._vllm import VLLMServer

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning"),
]

HARNESS = "pi"
CONTEXT = 16_384


@pytest.fixture
def generated(tmp_path: Path) -> Path:
    """Training tasks from one repository, held-out ones from another, all validated."""
    tasks = tmp_path / "tasks"
    for name, extra in (("calc-train", ()), ("calc-held", ("--held-out",))):
        repo = make_repo(tmp_path / "repos" / name)
        argv = ["tasks", "generate", "--repo", str(repo), "--out", str(tasks)]
        assert main([*argv, "--classes", "qa", "--limit", "1", *extra]) == 0
    assert main(["tasks", "validate", str(tasks)]) == 0
    return tasks


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TrainerConfig, VLLMServer, ProxyServer]]:
    require_vllm()
    require_harness(HARNESS)
    require_sandbox()
    model = build_tiny_llama(tmp_path / "tiny")
    config = TrainerConfig.model_validate(
        {
            "base_model": str(model),
            "harnesses": [HARNESS],
            "output_dir": str(tmp_path / "runs"),
            "sampling": {"temperature": 1.0, "max_tokens_per_turn": 64},
            "grpo": {"group_size": 2, "max_steps": 2, "publish_every": 1},
            "vllm": {"served_model": "tiny"},
            "proxy": {"store": str(tmp_path / "sa.db")},
            "report_to": "none",
        }
    )
    with proxied(config, model, tmp_path, max_model_len=CONTEXT) as served:
        yield served


def test_generate_validate_train_then_evaluate_three_checkpoints(
    generated: Path,
    served: tuple[TrainerConfig, VLLMServer, ProxyServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config, vllm, _proxy = served
    environment = SandboxEnvironment(harness=HARNESS, tasks_dir=generated)
    assert [task.id for task in environment.tasks()] == ["calc-train-qa-001"]
    with vllm.admin() as admin:
        training = Training(config, environment=environment, server=admin)
        training.runner.reward = load_reward(entry_points=False, plugins=[Spread()])
        result = training.run()
    assert result.published == ["pi-v1", "pi-v2"]
    trained = asyncio.run(stored_sessions(config.proxy.store))
    assert len(trained) == 4 and all(turns for _, turns in trained.values())

    # Sampling enforced: every training session and each of its turns carry the run's
    # sampling, the requests sent upstream sampled with it, and no turn was refused for it.
    enforced = config.sampling.enforced.to_json()
    assert enforced["max_tokens"] == 64  # pi asks for 8192
    for session, turns in trained.values():
        assert session.sampling == enforced
        for turn in turns:
            assert turn.tokens is not None and turn.tokens.sampling == enforced
            assert turn.request is not None and turn.request["max_tokens"] == 64
            assert (turn.request["temperature"], turn.request["top_k"]) == (1.0, 0)
    steps = result.metrics
    assert [m.step for m in steps] == [1, 2]
    assert all(m.refused_sampling == 0 for m in steps)

    # No optimiser step yet at step 1: the trained policy is the behaviour policy.
    first = steps[0]
    assert first.samples > 0 and first.tokens > 0
    assert first.importance_ratio_mean == pytest.approx(1.0, abs=1e-3)
    assert first.importance_ratio_min is not None and first.importance_ratio_min > 0.98
    assert first.importance_ratio_max is not None and first.importance_ratio_max < 1.02
    assert first.clip_fraction == 0.0
    assert first.behaviour_kl is not None and abs(first.behaviour_kl) < 1e-4

    config_file = tmp_path / "eval.yaml"
    config_file.write_text(json.dumps(config.model_dump(mode="json")))
    out = tmp_path / "eval"
    argv = ["eval", str(config_file), "--tasks", str(generated), "--harness", HARNESS]
    argv += ["--models", "base,pi-v1,pi-v2", "--out", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    with vllm.admin() as admin:
        assert {"tiny", "pi-v1", "pi-v2"} <= set(admin.models())
    report = json.loads((out / "eval.json").read_text())
    assert report["tasks"] == ["calc-held-qa-001"]
    rows = {c["checkpoint"]: c for c in report["checkpoints"]}
    assert list(rows) == ["base", "pi-v1", "pi-v2"]
    assert all(row["rollouts"] == row["scored"] == 1 for row in rows.values()), rows
    assert [rows[name]["step"] for name in rows] == [None, 1, 2]
    evaluated = {
        sid: turns
        for sid, (_, turns) in asyncio.run(stored_sessions(config.proxy.store)).items()
        if sid not in trained
    }
    assert sorted(turns[0].model for turns in evaluated.values()) == ["pi-v1", "pi-v2", "tiny"]
    assert (out / "eval.png").stat().st_size > 0

    # The same evaluation again: the report, and no new session.
    assert main(argv) == 0
    assert len(asyncio.run(stored_sessions(config.proxy.store))) == len(trained) + 3
    assert json.loads((out / "eval.json").read_text())["ran_now"] == {}
