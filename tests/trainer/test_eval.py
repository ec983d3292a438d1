"""Evaluation: checkpoints resolved (base, kept adapter versions, clear errors), rollouts run
through a real proxy and store per checkpoint and never run twice, the figures computed from
the rollout lines, and the ``safeagents eval`` command's errors and cached report."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tasks.task_kit import TASK_TOML, write_task

from safeagents.cli import main
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.scripted import Script, ScriptedServer, find_harness
from safeagents.store import SQLiteStore
from trainer import TrainerConfig
from trainer._driver import RunSummary
from trainer._eval import (
    BASE,
    Checkpoint,
    CheckpointError,
    evaluate_checkpoint,
    read_lines,
    resolve_checkpoints,
    summarise,
)
from trainer._toy import ToyEnvironment

HELD_OUT_TOML = TASK_TOML + "\n[metadata.safeagents]\nheld_out = true\n"


def keep_adapter(output_dir: Path, harness: str, version: int, step: int | None = None) -> Path:
    """A kept adapter version as the publisher leaves it (config, and ``version.json``)."""
    path = output_dir / harness / f"v{version}"
    path.mkdir(parents=True)
    (path / "adapter_config.json").write_text(json.dumps({"r": 8, "peft_type": "LORA"}))
    if step is not None:
        (path / "version.json").write_text(
            json.dumps({"name": f"{harness}-v{version}", "step": step})
        )
    return path


def test_checkpoints_resolve_to_the_base_model_and_kept_adapters(tmp_path: Path) -> None:
    v10 = keep_adapter(tmp_path, "pi", 10, step=40)
    keep_adapter(tmp_path, "pi", 20)
    found = resolve_checkpoints(
        ["base", "pi-v10", "pi-v20"],
        harness="pi",
        base_served="Qwen/Qwen3-1.7B",
        output_dir=tmp_path,
    )
    assert found[0] == Checkpoint("base", "Qwen/Qwen3-1.7B", 0)
    assert found[1] == Checkpoint("pi-v10", "pi-v10", 10, v10, 40)
    assert (found[2].served, found[2].step) == ("pi-v20", None)


def test_bad_checkpoints_are_each_named(tmp_path: Path) -> None:
    keep_adapter(tmp_path, "pi", 10)
    keep_adapter(tmp_path, "pi", 30)
    with pytest.raises(CheckpointError) as raised:
        resolve_checkpoints(
            ["pi-v10", "latest", "codex-v3", "pi-v10", "pi-v20"],
            harness="pi",
            base_served="tiny",
            output_dir=tmp_path,
        )
    problems = raised.value.problems
    assert problems[0] == "unknown checkpoint 'latest': expected base or pi-v<k>"
    assert problems[1] == "'codex-v3' is an adapter of another harness, not pi"
    assert problems[2] == "checkpoint 'pi-v10' given twice"
    assert "missing adapter for 'pi-v20'" in problems[3]
    assert "(kept: pi-v10, pi-v30)" in problems[3]
    with pytest.raises(CheckpointError, match="no checkpoints given"):
        resolve_checkpoints([], harness="pi", base_served="tiny", output_dir=tmp_path)


def line(task: str, index: int, status: str = "scored", **values: Any) -> dict[str, Any]:
    defaults = {"success": None, "hacked": False, "tool_calls": 3, "tokens": 100, "seconds": 2.0}
    return {"task_id": task, "index": index, "status": status, **defaults, **values}


def test_the_figures_come_from_the_lines_of_the_tasks_and_rollouts_asked_for() -> None:
    lines = [
        line("a", 0, success=True, tool_calls=2, tokens=50),
        line("a", 1, success=False, tool_calls=6, hacked=True, tokens=150),
        line("b", 0, success=False, tool_calls=4),
        line("b", 1, success=True, tool_calls=4),
        line("c", 0, "crash", tool_calls=None, tokens=None, seconds=1.0),
        line("c", 1, "unscored", tool_calls=1, tokens=None),
        line("a", 2, success=True),  # beyond K = 2
        line("z", 0, success=True),  # not a task evaluated
    ]
    report = summarise(Checkpoint(BASE, "tiny", 0), lines, ["a", "b", "c"], 2)
    assert (report.tasks, report.rollouts, report.scored) == (3, 6, 4)
    assert (report.unscored, report.failed) == (1, 1)
    assert report.pass_at_1 == 0.5  # a's first succeeded, b's did not, c's was not scored
    assert report.mean_success == 0.5
    assert report.tool_calls_mean == pytest.approx((2 + 6 + 4 + 4 + 1) / 5)
    assert report.hack_rate == pytest.approx(1 / 5)
    assert report.tokens_mean == pytest.approx((50 + 150 + 100 + 100) / 4)
    assert report.session_seconds_total == pytest.approx(11.0)
    empty = summarise(Checkpoint(BASE, "tiny", 0), [], ["a"], 1)
    assert (empty.pass_at_1, empty.mean_success, empty.hack_rate) == (None, None, None)


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[ProxyServer]:
    with ScriptedServer(Script.from_data(["red green blue"])) as model:
        config = ProxyConfig(upstream=model.base_url, store=str(tmp_path / "sa.db"))
        with ProxyServer(config, port=0) as server:
            yield server


def trainer_config(tmp_path: Path, proxy_url: str) -> TrainerConfig:
    return TrainerConfig.model_validate(
        {
            "base_model": "tiny",
            "harnesses": ["generic", "pi"],
            "output_dir": str(tmp_path / "runs"),
            "vllm": {"base_url": "http://127.0.0.1:9"},
            "proxy": {"admin_url": f"{proxy_url}/safeagents/v1", "store": str(tmp_path / "sa.db")},
        }
    )


async def session_count(store_path: str) -> int:
    store = SQLiteStore(store_path)
    try:
        return len(await store.list_sessions(limit=10_000))
    finally:
        await store.close()


def evaluate(config: TrainerConfig, results: Path, rollouts: int) -> RunSummary:
    async def go() -> RunSummary:
        store = SQLiteStore(config.proxy.store)
        try:
            return await evaluate_checkpoint(
                config,
                ToyEnvironment(tasks=2),
                Checkpoint(BASE, "tiny", 0),
                store=store,
                results=results,
                rollouts=rollouts,
            )
        finally:
            await store.close()

    return asyncio.run(go())


def test_an_evaluation_run_again_starts_no_session(tmp_path: Path, proxy: ProxyServer) -> None:
    config = trainer_config(tmp_path, proxy.url)
    results = tmp_path / "eval" / "base.jsonl"
    first = evaluate(config, results, rollouts=2)
    assert first.ran == 4 and first.scored == 4
    sessions = asyncio.run(session_count(config.proxy.store))
    assert sessions == 4
    again = evaluate(config, results, rollouts=2)
    assert (again.ran, again.resumed) == (0, 4)
    assert asyncio.run(session_count(config.proxy.store)) == sessions
    more = evaluate(config, results, rollouts=3)  # a larger K runs only the new indices
    assert (more.ran, more.resumed) == (2, 4)
    report = summarise(Checkpoint(BASE, "tiny", 0), read_lines(results), ["toy-0", "toy-1"], 3)
    assert (report.rollouts, report.scored, report.tasks) == (6, 6, 2)
    assert report.mean_success is not None and report.tool_calls_mean is not None


def eval_cli(config: Path, tasks: Path, models: str, *extra: str) -> int:
    argv = ["eval", str(config), "--tasks", str(tasks), "--harness", "pi", "--models", models]
    return main([*argv, *extra])


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "eval.yaml"
    path.write_text(
        f"""\
base_model: tiny
harnesses: [pi]
output_dir: {tmp_path / "runs"}
vllm: {{base_url: "http://127.0.0.1:9"}}
proxy: {{admin_url: "http://127.0.0.1:9/safeagents/v1", store: "{tmp_path / "sa.db"}"}}
"""
    )
    return path


needs_pi = pytest.mark.skipif(find_harness("pi") is None, reason="pi is not installed")


def test_the_command_refuses_unknown_checkpoints_and_missing_adapters(
    tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_task(tmp_path / "tasks" / "t1", toml=HELD_OUT_TOML)
    assert eval_cli(config_file, tmp_path / "tasks", "base,pi-v4,nope") == 2
    err = capsys.readouterr().err
    assert "missing adapter for 'pi-v4'" in err
    assert "unknown checkpoint 'nope'" in err


def test_the_command_needs_held_out_tasks_and_warns_about_the_others(
    tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_task(tmp_path / "tasks" / "trained")
    assert eval_cli(config_file, tmp_path / "tasks", "base") == 2
    assert "none of its 1 task(s) is held out" in capsys.readouterr().err
    write_task(tmp_path / "tasks" / "held", toml=HELD_OUT_TOML)
    assert eval_cli(config_file, tmp_path / "tasks", "nope") == 2
    assert "1 task(s) in" in capsys.readouterr().err
    assert eval_cli(config_file, tmp_path / "missing", "base") == 2
    assert "missing: not a directory" in capsys.readouterr().err
    assert eval_cli(config_file, tmp_path / "tasks", "base", "--rollouts", "0") == 2


@needs_pi
def test_the_training_environments_sandbox_limits_are_checked(
    tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_task(tmp_path / "tasks" / "held", toml=HELD_OUT_TOML)
    environment = (
        'environment: {factory: "trainer:SandboxEnvironment", options: {limits: {steps: 3}}}'
    )
    config_file.write_text(config_file.read_text() + environment + "\n")
    assert eval_cli(config_file, tmp_path / "tasks", "base") == 2
    assert "environment options:" in capsys.readouterr().err


@needs_pi
def test_a_cached_evaluation_reports_without_vllm_or_new_sessions(
    tmp_path: Path, proxy: ProxyServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = trainer_config(tmp_path, proxy.url)
    keep_adapter(Path(config.output_dir), "pi", 2, step=2)
    out = tmp_path / "eval"
    for checkpoint in ("base", "pi-v2"):
        evaluate(config, out / f"{checkpoint}.jsonl", rollouts=2)
    for task in ("toy-0", "toy-1"):
        write_task(tmp_path / "tasks" / task, toml=HELD_OUT_TOML)
    config_path = tmp_path / "eval.yaml"
    config_path.write_text(json.dumps(config.model_dump(mode="json")))
    sessions = asyncio.run(session_count(config.proxy.store))
    # vLLM's URL is a closed port: a cached evaluation never needs it.
    code = eval_cli(
        config_path, tmp_path / "tasks", "base,pi-v2", "--rollouts", "2", "--out", str(out)
    )
    assert code == 0, capsys.readouterr().err
    assert asyncio.run(session_count(config.proxy.store)) == sessions
    report = json.loads((out / "eval.json").read_text())
    assert report["ran_now"] == {}
    assert [c["checkpoint"] for c in report["checkpoints"]] == ["base", "pi-v2"]
    assert [c["scored"] for c in report["checkpoints"]] == [4, 4]
    assert report["checkpoints"][1]["step"] == 2
    assert (out / "eval.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "pi-v2" in printed and "pass@1" in printed
    # One more rollout per task is not cached: now vLLM is needed, and its absence is clear.
    code = eval_cli(config_path, tmp_path / "tasks", "base", "--rollouts", "3", "--out", str(out))
    assert code == 1
    assert "vLLM at http://127.0.0.1:9" in capsys.readouterr().err
    # pi-v2 retrained (another step under the same name): its cached rollouts are not its own.
    version = Path(config.output_dir) / "pi" / "v2" / "version.json"
    version.write_text(json.dumps({"name": "pi-v2", "step": 7}))
    code = eval_cli(config_path, tmp_path / "tasks", "pi-v2", "--rollouts", "2", "--out", str(out))
    assert code == 2
    assert "pi-v2 at step 2, but pi-v2 is now at step 7" in capsys.readouterr().err
