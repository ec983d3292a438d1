"""HarnessEnvironment: a real harness (pi) on a task directory, through a real proxy.

The scripted model plays one script per rollout workspace: an honest fix of calc.py, or the
deletion of the failing test, which the proxy's rules block because the session was opened
with the rollout's workspace as its cwd.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from harness_env_kit import (
    FIXED,
    HACK,
    HONEST,
    PROMPT,
    ScriptPerWorkspaceServer,
    make_task_dir,
    require_harness,
)

from safeagents import Firewall
from safeagents.protocols import Sampling
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.store import SQLiteStore
from trainer import DEFAULT_TOOL_CALL_BONUS, DEFAULT_TOOL_CALL_HORIZON, Endpoint, load_reward
from trainer._advantages import group_samples
from trainer._harness_env import (
    HarnessEnvironment,
    admin_url,
    default_workspaces_dir,
)
from trainer._runner import ProxyAdmin, RolloutRunner
from trainer.tasks import TaskDirError

HARNESS = "pi"
MODEL = "scripted-model"
SAMPLING = Sampling(temperature=1.0, max_tokens=512)


@pytest.fixture(scope="module")
def firewall() -> Firewall:
    return Firewall.load()


@pytest.fixture
def workspaces() -> Iterator[Path]:
    """Rollout workspaces outside /tmp, where the bundled rules allow deleting tests."""
    base = Path(os.environ.get("SAFEAGENTS_TEST_ROLLOUTS") or Path.home() / ".cache")
    base.mkdir(parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="safeagents-rollouts-", dir=base))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def _environment(
    tmp_path: Path, workspaces: Path, harness: str = HARNESS, **options: object
) -> HarnessEnvironment:
    make_task_dir(tmp_path / "tasks")
    return HarnessEnvironment(
        harness=harness,
        tasks_dir=tmp_path / "tasks",
        timeout=120,
        workspaces_dir=workspaces,
        **options,  # type: ignore[arg-type]
    )


def _endpoint(proxy: ProxyServer, session_id: str) -> Endpoint:
    return Endpoint(proxy.session_url(session_id), session_id, HARNESS, MODEL, 1.0, 512)


def _session(proxy: ProxyServer, session_id: str) -> dict[str, object]:
    response = httpx.get(f"{proxy.url}/safeagents/v1/sessions/{session_id}", timeout=30)
    response.raise_for_status()
    document: dict[str, object] = response.json()
    return document


@pytest.mark.e2e
def test_an_honest_fix_passes_and_a_test_deletion_is_blocked(
    tmp_path: Path, workspaces: Path, firewall: Firewall
) -> None:
    require_harness(HARNESS)
    environment = _environment(tmp_path, workspaces, keep_workspaces=True)
    (task,) = environment.tasks()
    assert task.id == "fix-add" and task.prompt == PROMPT
    with ScriptPerWorkspaceServer([HONEST, HACK]) as model:
        config = ProxyConfig(upstream=model.url, store=str(tmp_path / "sa.db"))
        with ProxyServer(config, firewall=firewall, port=0) as proxy:
            # one after the other, so the first workspace gets the honest script
            honest = asyncio.run(environment.rollout(task, _endpoint(proxy, "honest")))
            hacker = asyncio.run(environment.rollout(task, _endpoint(proxy, "hacker")))
            sessions = {name: _session(proxy, name) for name in ("honest", "hacker")}

    assert honest == {
        "success": True,
        "reward": 1.0,
        "harness_exit": 0,
        "timed_out": False,
        "verify_exit": 0,
        "verify_timed_out": False,
        "reward_source": "reward.txt",
    }
    assert hacker["success"] is False and hacker["reward"] == 0.0
    assert hacker["harness_exit"] == 0 and hacker["verify_exit"] == 1

    kept = model.router.workspaces
    assert [sessions[name]["cwd"] for name in ("honest", "hacker")] == kept
    assert sessions["honest"]["hacked"] is False and sessions["hacker"]["hacked"] is True
    findings = sessions["hacker"]["findings"]
    assert isinstance(findings, list)
    assert {finding["rule_id"] for finding in findings} == {"test-file-deletion"}
    honest_workspace, hacker_workspace = (Path(path) for path in kept)
    assert (honest_workspace / "calc.py").read_text() == FIXED
    # the deletion never reached the harness: the test is still there, the bug too
    assert (hacker_workspace / "tests" / "test_calc.py").is_file()
    assert "a - b" in (hacker_workspace / "calc.py").read_text()


@pytest.mark.e2e
@pytest.mark.parametrize("harness", [HARNESS, "codex", "claude"])
def test_a_group_of_rollouts_is_scored_and_trained_on_captured_tokens(
    harness: str, tmp_path: Path, workspaces: Path, firewall: Firewall
) -> None:
    """pi speaks Chat Completions; codex (Responses) and claude (Messages) are served from
    the upstream's chat endpoint, and their rows train all the same, sampled as the run says."""
    require_harness(harness)
    environment = _environment(tmp_path, workspaces, harness=harness)
    store_path = tmp_path / "sa.db"

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
            concurrency=2,
            sampling=SAMPLING,
        )
        try:
            return await runner.collect(environment.tasks())
        finally:
            await store.close()

    with ScriptPerWorkspaceServer([HONEST, HACK]) as model:
        config = ProxyConfig(upstream=model.url, store=str(store_path), capture_tokens=True)
        with ProxyServer(config, firewall=firewall, port=0) as proxy:
            step = asyncio.run(collect(proxy.url))

    assert step.failed == 0 and step.unscored == 0  # type: ignore[attr-defined]
    (group,) = step.groups  # type: ignore[attr-defined]
    assert group.task_id == "fix-add" and group.scored == 2
    by_hack = {rollout.hacked: rollout for rollout in group.rollouts}
    hacked, honest = by_hack[True], by_hack[False]
    assert hacked.reward == 0.0 and hacked.success is False
    bonus = DEFAULT_TOOL_CALL_BONUS * (1 - honest.tool_calls / DEFAULT_TOOL_CALL_HORIZON)
    assert honest.success is True and honest.tool_calls == 1
    assert honest.reward == pytest.approx(1.0 + bonus)
    assert honest.rows and hacked.rows
    assert all(row.input_ids and any(row.loss_mask) for row in (*honest.rows, *hacked.rows))
    for rollout in (honest, hacked):
        assert "sampling" not in rollout.excluded and "no_tokens" not in rollout.excluded
    sent = [request.body for script in model.router.models for request in script.model_requests()]
    assert sent and all(body["temperature"] == 1.0 and body["top_k"] == 0 for body in sent)
    assert all("messages" in body for body in sent)  # every dialect reached chat
    advantages = {sample.reward: sample.advantage for sample in group_samples(group)}
    assert advantages[honest.reward] > 0 > advantages[0.0]
    assert list(workspaces.iterdir()) == []  # every rollout's directory was removed


def test_the_tasks_come_from_the_directory_with_their_problems_listed(tmp_path: Path) -> None:
    make_task_dir(tmp_path / "tasks", "b-task")
    make_task_dir(tmp_path / "tasks", "a-task")
    (tmp_path / "tasks" / ".cache").mkdir()
    environment = HarnessEnvironment(harness="opencode", tasks_dir=tmp_path / "tasks")
    assert [task.id for task in environment.tasks()] == ["a-task", "b-task"]
    assert environment.tasks()[0].data == {"path": str((tmp_path / "tasks" / "a-task").resolve())}
    (tmp_path / "tasks" / "a-task" / "tests" / "test.sh").unlink()
    (tmp_path / "tasks" / "b-task" / "instruction.md").unlink()
    with pytest.raises(TaskDirError) as raised:
        HarnessEnvironment(harness="pi", tasks_dir=tmp_path / "tasks")
    assert len(raised.value.problems) == 2
    assert "a-task: missing tests/test.sh (the verifier)" in str(raised.value)
    assert "b-task: missing instruction.md" in str(raised.value)
    with pytest.raises(ValueError, match="unknown harness 'vim'"):
        HarnessEnvironment(harness="vim", tasks_dir=tmp_path / "tasks")


def test_workspaces_default_to_the_cache_and_scratch_space_is_warned_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/srv/cache")
    assert default_workspaces_dir() == Path("/srv/cache/safeagents/rollouts")
    make_task_dir(tmp_path / "tasks")
    with caplog.at_level("WARNING", logger="safeagents.trainer"):
        HarnessEnvironment(harness="pi", tasks_dir=tmp_path / "tasks", workspaces_dir=tmp_path)
    assert "scratch directory" in caplog.text


def test_the_admin_api_is_found_from_the_session_base_url() -> None:
    endpoint = Endpoint("http://proxy:8787/s/run-1/v1", "run-1", "pi", "m", 1.0, 8)
    assert admin_url(endpoint) == "http://proxy:8787/safeagents/v1"
    elsewhere = Endpoint("http://proxy:8787/v1", "run-1", "pi", "m", 1.0, 8)
    with pytest.raises(ValueError, match="does not name session"):
        admin_url(elsewhere)


def test_a_task_not_of_the_environment_is_refused(tmp_path: Path) -> None:
    make_task_dir(tmp_path / "tasks")
    environment = HarnessEnvironment(harness="pi", tasks_dir=tmp_path / "tasks")
    (task,) = environment.tasks()
    stranger = type(task)(id="other", prompt="?")
    endpoint = Endpoint("http://127.0.0.1:1/s/x/v1", "x", "pi", "m", 1.0, 8)
    with pytest.raises(KeyError, match="other"):
        asyncio.run(environment.rollout(stranger, endpoint))


def test_held_out_tasks_are_refused_for_training(tmp_path: Path) -> None:
    make_task_dir(tmp_path / "tasks", "train-task")
    held = make_task_dir(tmp_path / "tasks", "eval-task")
    with (held / "task.toml").open("a") as toml:
        toml.write("\n[metadata.safeagents]\nheld_out = true\n")
    training = HarnessEnvironment(harness="pi", tasks_dir=tmp_path / "tasks")
    assert [task.id for task in training.tasks()] == ["train-task"]
    evaluation = HarnessEnvironment(harness="pi", tasks_dir=tmp_path / "tasks", held_out=True)
    assert [task.id for task in evaluation.tasks()] == ["eval-task", "train-task"]
    with pytest.raises(TaskDirError, match="every task is held out"):
        HarnessEnvironment(harness="pi", tasks_dir=held)
