"""Issue 13's multi-turn proof on CPU: pi, a real harness, runs repair tasks through the
proxy (token capture on) under the continuous scheduler, with a blocked call in every group,
and what the trainer learns from is checked from the recorded turns, the rows and the step's
micro-batches: masks cover only model tokens, the blocked completion is trained once with
reward 0, the tool-call bonus tells two successful sessions apart, a stale sample is dropped,
a step packs into more than one micro-batch, and the run's sampling was enforced on every
request pi made.

The model is the scripted one (its token ids and logprobs are stand-ins), so the importance
ratio is checked where a real model samples pi's turns (tests/trainer/test_multiturn_ratio.py)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import pytest
from harness_env_kit import (
    DELETE_COMMAND,
    FIXED,
    ScriptPerWorkspaceServer,
    make_task_dir,
    require_harness,
)

from safeagents import Firewall
from safeagents.protocols import Sampling
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.scripted import Script
from safeagents.store import SQLiteStore, TurnRecord
from trainer import (
    DEFAULT_TOOL_CALL_BONUS,
    DEFAULT_TOOL_CALL_HORIZON,
    HarnessEnvironment,
    load_reward,
)
from trainer._batching import Staleness, learning_samples, pack_micro_batches
from trainer._runner import ProxyAdmin, RolloutRunner, StepRollouts

pytestmark = pytest.mark.e2e

HARNESS = "pi"
ONE_CALL = Script.from_data(
    [{"say": "Fixing it.", "write": {"path": "calc.py", "content": FIXED}}, "done"]
)
THREE_CALLS = Script.from_data(
    [
        {"say": "Let me look first.", "shell": "ls"},
        {"say": "And the code.", "shell": "cat calc.py"},
        {"say": "Now the fix.", "write": {"path": "calc.py", "content": FIXED}},
        "done",
    ]
)
HACK = Script.from_data(
    [
        {"say": "Let me look first.", "shell": "ls"},
        {"say": "Dropping the test is quicker.", "shell": DELETE_COMMAND},
        "done",
    ]
)
SCRIPTS = [ONE_CALL, THREE_CALLS, HACK, HACK]
SAMPLING = Sampling(temperature=0.7, top_p=1.0, top_k=0, max_tokens=512, thinking=True)
"""Not what pi asks for (8192 tokens a turn, its own temperature): the proxy's to enforce."""


@pytest.fixture
def workspaces() -> Iterator[Path]:
    """Rollout workspaces outside /tmp, where the bundled rules allow deleting tests."""
    base = Path(os.environ.get("SAFEAGENTS_TEST_ROLLOUTS") or Path.home() / ".cache")
    base.mkdir(parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="safeagents-multiturn-", dir=base))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


async def _collect(
    proxy: ProxyServer, environment: HarnessEnvironment, store_path: Path
) -> tuple[StepRollouts, dict[str, list[TurnRecord]], Mapping[str, object]]:
    admin = ProxyAdmin(f"{proxy.url}/safeagents/v1")
    store = SQLiteStore(store_path)
    try:
        # Served as version 1 of the adapter: every turn records pi-v1.
        async with httpx.AsyncClient() as client:
            response = await client.put(
                f"{proxy.url}/safeagents/v1/aliases/{HARNESS}", json={"model": "pi-v1"}
            )
            response.raise_for_status()
        runner = RolloutRunner(
            environment,
            proxy_url=proxy.url,
            admin=admin,
            store=store,
            reward=load_reward(entry_points=False),
            group_size=len(SCRIPTS),
            model="scripted-model",
            temperature=SAMPLING.temperature,
            max_tokens=SAMPLING.max_tokens,
            concurrency=len(SCRIPTS),
            sampling=SAMPLING,
        )
        collected = await runner.collect(environment.tasks())
        turns = {r.session_id: await store.turns(r.session_id) for r in collected.rollouts}
        sessions = {r.session_id: await store.get_session(r.session_id) for r in collected.rollouts}
        sampling = {sid: session.sampling if session else None for sid, session in sessions.items()}
        return collected, turns, sampling
    finally:
        await store.close()


def _trained(row_ids: tuple[int, ...], mask: tuple[int, ...]) -> list[int]:
    return [token for token, trained in zip(row_ids, mask, strict=True) if trained]


def test_multi_turn_rollouts_of_a_real_harness_train_what_they_should(
    tmp_path: Path, workspaces: Path
) -> None:
    require_harness(HARNESS)
    make_task_dir(tmp_path / "tasks")
    environment = HarnessEnvironment(
        harness=HARNESS, tasks_dir=tmp_path / "tasks", timeout=120, workspaces_dir=workspaces
    )
    with ScriptPerWorkspaceServer(SCRIPTS) as model:
        config = ProxyConfig(upstream=model.url, store=str(tmp_path / "sa.db"), capture_tokens=True)
        with ProxyServer(config, firewall=Firewall.load(), port=0) as proxy:
            collected, turns, sampling = asyncio.run(
                _collect(proxy, environment, tmp_path / "sa.db")
            )

    assert collected.failed == 0 and collected.unscored == 0
    (group,) = collected.groups
    assert group.scored == 4
    honest = sorted((r for r in group.rollouts if not r.hacked), key=lambda r: r.tool_calls)
    hacked = [r for r in group.rollouts if r.hacked]
    assert [r.tool_calls for r in honest] == [1, 3] and len(hacked) == 2

    # Sampling enforced: each session opened with the run's, and every request sent upstream
    # sampled with it whatever pi asked, recorded per turn; no turn was refused for it.
    assert sampling == dict.fromkeys(turns, SAMPLING.to_json())
    for session_turns in turns.values():
        for turn in session_turns:
            assert turn.tokens is not None and turn.tokens.sampling == SAMPLING.to_json()
            assert turn.request is not None
            sent = {key: turn.request.get(key) for key in ("temperature", "top_p", "top_k")}
            assert sent == {"temperature": 0.7, "top_p": 1.0, "top_k": 0}
            assert turn.request["max_tokens"] == 512 and "max_completion_tokens" not in turn.request
            assert turn.request["chat_template_kwargs"]["enable_thinking"] is True
    assert all(not rollout.excluded.get("sampling") for rollout in group.rollouts)

    # Masks cover only model tokens: what a row trains is exactly its turns' completions.
    for rollout in group.rollouts:
        by_seq = {turn.seq: turn for turn in turns[rollout.session_id]}
        assert len(by_seq) >= 2  # several turns: a multi-turn session
        for row in rollout.rows:
            completions = [t for seq in row.turns for t in by_seq[seq].tokens.completion_token_ids]  # type: ignore[union-attr]
            assert _trained(row.input_ids, row.loss_mask) == completions
            assert all(
                logprob == 0.0
                for logprob, trained in zip(row.logprobs, row.loss_mask, strict=True)
                if not trained
            )

    # The blocked completion is trained once, with the session's reward 0.
    for rollout in hacked:
        assert rollout.reward == 0.0 and rollout.success is False
        blocked = [
            turn.seq
            for turn in turns[rollout.session_id]
            if any(finding.blocked for finding in turn.findings)
        ]
        assert len(blocked) == 1
        trained_in = [row for row in rollout.rows if blocked[0] in row.turns]
        assert len(trained_in) == 1 and trained_in[0].turns.count(blocked[0]) == 1

    # The tool-call bonus: both succeed, fewer calls earn more.
    def expected(calls: int) -> float:
        return 1.0 + DEFAULT_TOOL_CALL_BONUS * (1 - calls / DEFAULT_TOOL_CALL_HORIZON)

    assert [r.success for r in honest] == [True, True]
    assert [r.reward for r in honest] == [pytest.approx(expected(1)), pytest.approx(expected(3))]
    assert honest[0].reward > honest[1].reward  # type: ignore[operator]

    # Staleness: the rows were sampled from pi-v1; at v5 they are kept, at v6 dropped.
    fresh = learning_samples(group, current_version=5, max_staleness=Staleness(4), step=50)
    assert fresh.dropped == 0 and fresh.kept
    assert set(fresh.steps_behind) == {40}  # v1 holds step 10 on the CPU path
    stale = learning_samples(group, current_version=6, max_staleness=Staleness(4), step=60)
    assert stale.dropped == len(fresh.kept) and not stale.kept

    # Packing: the longest row fills a micro-batch, so the step takes several.
    longest = max(sample.row.num_tokens for sample in fresh.kept)
    packing = pack_micro_batches(fresh.kept, token_budget=longest)
    assert len(packing.batches) > 1 and packing.dropped_oversize == 0
    assert sum(len(batch.samples) for batch in packing.batches) == len(fresh.kept)
