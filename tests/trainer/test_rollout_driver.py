"""Standalone rollout runs through a real proxy and store: every rollout a JSONL line, harness
crashes, time-outs and sandbox failures left unscored (never 0) and counted, a stopped run
resumed with only the missing rollouts, and the ``safeagents rollouts`` command."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from safeagents.cli import main
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.scripted import Script, ScriptedServer
from safeagents.store import SQLiteStore
from trainer import TrainerConfig
from trainer._driver import ResultsLog, RunSummary, drive, runner_from_config
from trainer._environment import Endpoint, Task
from trainer._scheduler import RolloutFailure
from trainer._toy import ToyEnvironment


class Flaky(ToyEnvironment):
    """The toy environment whose rollout 1 times out, 2 crashes and 3 loses its sandbox;
    each of them still talked to the model through the proxy first."""

    async def rollout(self, task: Task, endpoint: Endpoint) -> Mapping[str, Any]:
        outcome = await super().rollout(task, endpoint)
        index = int(endpoint.session_id.split("-")[-2])
        if index == 1:
            return {**outcome, "timed_out": True}
        if index == 2:
            return {**outcome, "harness_exit": 139}
        if index == 3:
            raise RolloutFailure("sandbox", "the workspace vanished")
        return outcome


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[ProxyServer]:
    with ScriptedServer(Script.from_data(["red green blue"])) as model:
        config = ProxyConfig(upstream=model.base_url, store=str(tmp_path / "sa.db"))
        with ProxyServer(config, port=0) as server:
            yield server


def config_for(tmp_path: Path, proxy: ProxyServer, **environment: Any) -> TrainerConfig:
    return TrainerConfig.model_validate(
        {
            "base_model": "tiny",
            "harnesses": ["generic"],
            "grpo": {"group_size": 5},
            "proxy": {"admin_url": f"{proxy.url}/safeagents/v1", "store": str(tmp_path / "sa.db")},
            "environment": {"factory": "trainer:ToyEnvironment", **environment},
        }
    )


def run(config: TrainerConfig, results: Path, tasks: int = 2) -> RunSummary:
    async def go() -> RunSummary:
        store = SQLiteStore(config.proxy.store)
        try:
            runner = runner_from_config(config, Flaky(tasks=tasks), store=store)
            with ResultsLog(results) as log:
                return await drive(runner, runner.environment.tasks(), log)
        finally:
            await store.close()

    return asyncio.run(go())


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def outcomes(store_path: str, session_ids: list[str]) -> list[Any]:
    store = SQLiteStore(store_path)
    try:
        return [(await store.get_session(sid)).outcome for sid in session_ids]  # type: ignore[union-attr]
    finally:
        await store.close()


def test_failed_rollouts_are_unscored_counted_and_written(
    tmp_path: Path, proxy: ProxyServer
) -> None:
    config = config_for(tmp_path, proxy)
    summary = run(config, tmp_path / "results.jsonl")
    written = lines(tmp_path / "results.jsonl")
    assert len(written) == 10
    by_index = {(line["task_id"], line["index"]): line for line in written}
    for task in ("toy-0", "toy-1"):
        statuses = [by_index[(task, i)]["status"] for i in range(5)]
        assert statuses == ["scored", "timeout", "crash", "sandbox", "scored"]
        assert by_index[(task, 0)]["reward"] is not None
        assert all(by_index[(task, i)]["reward"] is None for i in (1, 2, 3))
    assert summary.statuses == {"scored": 4, "timeout": 2, "crash": 2, "sandbox": 2}
    # No outcome was posted for the failed ones: the store has them unscored, not at 0.
    failed = [line["session_id"] for line in written if line["status"] in ("timeout", "crash")]
    assert asyncio.run(outcomes(config.proxy.store, failed)) == [None] * 4
    assert all(line["harness"] == "generic" for line in written)


def test_a_stopped_run_resumes_with_only_the_missing_rollouts(
    tmp_path: Path, proxy: ProxyServer
) -> None:
    config = config_for(tmp_path, proxy)
    results = tmp_path / "results.jsonl"
    run(config, results, tasks=3)
    first = lines(results)
    kept = [line for line in first if not (line["task_id"] == "toy-1" and line["index"] in (0, 4))]
    kept = [line for line in kept if line["task_id"] != "toy-2"]
    text = "".join(json.dumps(line) + "\n" for line in kept) + '{"task_id": "toy-2", "ind'
    results.write_text(text)  # a run killed mid-line

    summary = run(config, results, tasks=3)
    assert summary.resumed == len(kept) == 8
    assert summary.ran == 7
    reread = ResultsLog(results)
    reread.close()
    after = reread.previous
    assert reread.skipped == 1
    keys = sorted((line["task_id"], line["index"]) for line in after)
    assert keys == sorted((f"toy-{t}", i) for t in range(3) for i in range(5))
    old_ids = {line["session_id"] for line in first}
    assert not old_ids & {line["session_id"] for line in after[len(kept) :]}


def test_the_rollouts_command_writes_results_and_a_summary(
    tmp_path: Path, proxy: ProxyServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "rollouts.yaml"
    config.write_text(
        f"""\
base_model: tiny
harnesses: [generic]
proxy: {{admin_url: "{proxy.url}/safeagents/v1", store: "{tmp_path / "sa.db"}"}}
environment: {{factory: "trainer:ToyEnvironment", options: {{tasks: 3}}, concurrency: 4}}
""",
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    code = main(["rollouts", str(config), "--out", str(out), "--rollouts", "3"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    summary = json.loads(printed.strip().splitlines()[-1])
    assert summary["ran"] == 9 and summary["statuses"] == {"scored": 9}
    assert 1 <= summary["peak_live_sessions"] <= 4
    assert len(lines(out)) == 9
    assert main(["rollouts", str(config), "--out", str(out), "--rollouts", "3"]) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["ran"] == 0 and again["resumed"] == 9
    assert main(["rollouts", str(config), "--out", str(out), "--rollouts", "0"]) == 2


def test_the_rollouts_command_says_when_the_proxy_is_unreachable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "rollouts.yaml"
    config.write_text(
        """\
base_model: tiny
harnesses: [generic]
proxy: {admin_url: "http://127.0.0.1:9/safeagents/v1"}
environment: {factory: "trainer:ToyEnvironment"}
""",
        encoding="utf-8",
    )
    code = main(["rollouts", str(config), "--out", str(tmp_path / "out.jsonl")])
    captured = capsys.readouterr()
    assert code == 1
    assert "the proxy at http://127.0.0.1:9/safeagents/v1" in captured.err
    assert "Traceback" not in captured.err + captured.out
