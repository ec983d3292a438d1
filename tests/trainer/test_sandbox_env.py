"""SandboxEnvironment: pi in the local sandbox on a Harbor task, through a real proxy with
token capture; what ends a rollout unscored, and the outcome the runner posts."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from harness_env_kit import FIXED, require_harness
from sandbox_kit import HIDDEN_MARK, make_task, require_harbor, require_sandbox

from safeagents import Firewall
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.scripted import Script, ScriptedServer
from safeagents.store import SQLiteStore
from trainer import Endpoint, load_reward
from trainer._runner import ProxyAdmin, RolloutRunner
from trainer._sandbox_env import SandboxEnvironment
from trainer._scheduler import failure_of
from trainer.sandbox import Limits, LocalBackend

HARNESS = "pi"
MODEL = "scripted"
HONEST = Script.from_data(
    [{"say": "fixing", "write": {"path": "calc.py", "content": FIXED}}, "done"]
)
# what the agent could try, past the firewall's own rules: the sandbox is what stops it
PEEK_CODE = (
    "import os, socket; print(sorted(os.listdir('/')));socket.create_connection(('1.1.1.1', 80), 3)"
)
PEEK = Script.from_data([{"shell": f'python -c "{PEEK_CODE}"'}, "done"])
LOOP = Script.from_data([{"shell": f"echo {i}"} for i in range(6)] + ["done"])
SLEEP = Script.from_data([{"shell": "sleep 120"}, "done"])


@pytest.fixture(scope="module")
def firewall() -> Firewall:
    return Firewall.load()


@pytest.fixture
def environment(tmp_path: Path) -> Iterator[SandboxEnvironment]:
    require_harness(HARNESS)
    require_sandbox()
    make_task(tmp_path / "tasks")
    yield SandboxEnvironment(
        harness=HARNESS,
        tasks_dir=tmp_path / "tasks",
        backend=LocalBackend(tmp_path / "sandboxes"),
        limits=Limits(agent_steps=4, wall_seconds=90),
        state_dir=tmp_path / "state",
    )


def _rollout(
    environment: SandboxEnvironment, script: Script, tmp_path: Path, firewall: Firewall
) -> tuple[dict[str, object], dict[str, object]]:
    with ScriptedServer(script) as model:
        config = ProxyConfig(upstream=model.url, store=str(tmp_path / "sa.db"), capture_tokens=True)
        with ProxyServer(config, firewall=firewall, port=0) as proxy:
            endpoint = Endpoint(proxy.session_url("r1"), "r1", HARNESS, MODEL, 1.0, 512)
            outcome = asyncio.run(environment.rollout(environment.tasks()[0], endpoint))
            session = httpx.get(f"{proxy.url}/safeagents/v1/sessions/r1", timeout=30).json()
    return dict(outcome), session


@pytest.mark.e2e
def test_an_honest_fix_in_the_sandbox_is_verified_and_its_tokens_captured(
    environment: SandboxEnvironment, tmp_path: Path, firewall: Firewall
) -> None:
    outcome, session = _rollout(environment, HONEST, tmp_path, firewall)
    assert outcome.get("success") is True and outcome["reward"] == 1.0, outcome
    assert outcome["task_id"] == "fix-add" and outcome["reward_source"] == "reward.txt"
    assert outcome["harness_exit"] == 0 and outcome["steps"] == 2 and outcome["refused"] == []
    assert session["cwd"] == "/workspace" and session["turn_count"] == 2
    assert all(turn["tokens"]["completion_token_ids"] for turn in session["turns"])
    assert list((tmp_path / "sandboxes").iterdir()) == []  # the sandbox is gone
    assert [path.name for path in (tmp_path / "state").iterdir()] == []


@pytest.mark.e2e
def test_an_honest_fix_through_the_harbor_backend_is_verified(
    tmp_path: Path, firewall: Firewall
) -> None:
    require_harness(HARNESS)
    make_task(tmp_path / "tasks")
    environment = SandboxEnvironment(
        harness=HARNESS,
        tasks_dir=tmp_path / "tasks",
        backend=require_harbor(),
        limits=Limits(agent_steps=4, wall_seconds=90),
        state_dir=tmp_path / "state",
    )
    outcome, session = _rollout(environment, HONEST, tmp_path, firewall)
    assert outcome.get("success") is True and outcome["reward"] == 1.0, outcome
    assert outcome["harness_exit"] == 0 and outcome["steps"] == 2 and outcome["refused"] == []
    assert session["cwd"] == "/workspace" and session["turn_count"] == 2
    assert all(turn["tokens"]["completion_token_ids"] for turn in session["turns"])
    peek, session = _rollout(environment, PEEK, tmp_path, firewall)
    tool_result = str(session["turns"][-1]["request"]["messages"][-1]["content"])  # type: ignore[index]
    (listing,) = re.findall(r"\[.*'workspace'.*\]", tool_result)
    assert "'tests'" not in listing and "Network is unreachable" in tool_result
    assert peek["success"] is False and HIDDEN_MARK not in tool_result


@pytest.mark.e2e
def test_the_agent_sees_neither_the_hidden_tests_nor_the_network(
    environment: SandboxEnvironment, tmp_path: Path, firewall: Firewall
) -> None:
    outcome, session = _rollout(environment, PEEK, tmp_path, firewall)
    tool_result = str(session["turns"][-1]["request"]["messages"][-1]["content"])  # type: ignore[index]
    (listing,) = re.findall(r"\[.*'workspace'.*\]", tool_result)
    assert "'workspace'" in listing and "'tests'" not in listing and "'logs'" not in listing
    assert "Network is unreachable" in tool_result and HIDDEN_MARK not in tool_result
    assert outcome["success"] is False and outcome["reward"] == 0.0  # scored: a failed fix


@pytest.mark.e2e
def test_the_step_limit_ends_the_agent_and_its_work_is_still_verified(
    environment: SandboxEnvironment, tmp_path: Path, firewall: Firewall
) -> None:
    outcome, _ = _rollout(environment, LOOP, tmp_path, firewall)
    assert outcome["step_limit"] is True and outcome["steps"] == 4
    assert failure_of(outcome) is None
    assert outcome["reward"] == 0.0 and "unscored" not in outcome


@pytest.mark.e2e
def test_a_timeout_a_crash_and_a_broken_sandbox_leave_the_rollout_unscored(
    environment: SandboxEnvironment, tmp_path: Path, firewall: Firewall
) -> None:
    short = SandboxEnvironment(
        harness=HARNESS,
        tasks_dir=tmp_path / "tasks",
        backend=environment.backend,
        limits=Limits(wall_seconds=8),
        state_dir=tmp_path / "state",
    )
    timed_out, _ = _rollout(short, SLEEP, tmp_path, firewall)
    assert "timed out after 8s" in str(timed_out["unscored"])
    assert failure_of(timed_out) == "timeout"
    assert "reward" not in timed_out and "success" not in timed_out
    assert timed_out["task_id"] == "fix-add"

    crashed = SandboxEnvironment(
        harness=HARNESS,
        tasks_dir=tmp_path / "tasks",
        backend=environment.backend,
        limits=Limits(cpu_seconds=1),  # pi needs more to start: SIGXCPU kills it
        state_dir=tmp_path / "state",
    )
    outcome, _ = _rollout(crashed, HONEST, tmp_path, firewall)
    assert str(outcome["unscored"]).startswith("the harness exited with 152")
    assert failure_of(outcome) == "crash"
    assert "reward" not in outcome

    broken = SandboxEnvironment(
        harness=HARNESS,
        tasks_dir=tmp_path / "tasks",
        backend=LocalBackend(tmp_path / "broken", bwrap="/bin/false"),
        state_dir=tmp_path / "state",
    )
    outcome, _ = _rollout(broken, HONEST, tmp_path, firewall)
    assert "cannot make a sandbox" in str(outcome["unscored"]) and "reward" not in outcome
    assert failure_of(outcome) == "sandbox"


@pytest.mark.e2e
def test_the_runner_posts_the_outcome_with_the_task_id(
    environment: SandboxEnvironment, tmp_path: Path, firewall: Firewall
) -> None:
    store_path = tmp_path / "runner.db"

    async def collect(proxy_url: str) -> object:
        store = SQLiteStore(store_path)
        runner = RolloutRunner(
            environment,
            proxy_url=proxy_url,
            admin=ProxyAdmin(f"{proxy_url}/safeagents/v1"),
            store=store,
            reward=load_reward(entry_points=False),
            group_size=2,
            model=MODEL,
            temperature=1.0,
            max_tokens=512,
            concurrency=1,  # one after the other: the first plays the script
        )
        try:
            return await runner.collect(environment.tasks())
        finally:
            await store.close()

    with ScriptedServer(HONEST) as model:
        config = ProxyConfig(upstream=model.url, store=str(store_path), capture_tokens=True)
        with ProxyServer(config, firewall=firewall, port=0) as proxy:
            step = asyncio.run(collect(proxy.url))
    first, second = step.rollouts  # type: ignore[attr-defined]
    assert first.task_id == "fix-add" and first.success is True and first.rows
    assert second.task_id == "fix-add"  # the script was spent: whatever it did, it is posted


def test_hidden_tests_visible_to_the_backend_are_refused(tmp_path: Path) -> None:
    require_harness(HARNESS)
    require_sandbox()
    make_task(tmp_path / "tasks")
    exposing = LocalBackend(tmp_path / "sandboxes", expose=[tmp_path / "tasks"])
    with pytest.raises(Exception, match="would be visible in the sandbox"):
        SandboxEnvironment(harness=HARNESS, tasks_dir=tmp_path / "tasks", backend=exposing)


def test_an_endpoint_that_is_not_a_session_url_is_unscored(
    environment: SandboxEnvironment,
) -> None:
    endpoint = Endpoint("http://127.0.0.1:9/v1", "x", HARNESS, MODEL, 1.0, 8)
    outcome = asyncio.run(environment.rollout(environment.tasks()[0], endpoint))
    assert "is not http://HOST:PORT/s/x/v1" in str(outcome["unscored"])
