"""The harbor backend: Harbor drives the local sandbox as a custom environment (by import
path), both from its own trials (oracle and nop agents) and as safeagents' sandbox backend
(a bundled task validated through it); what Harbor cannot host fails with a clear error."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_kit import HIDDEN_MARK, make_task, require_harbor

from trainer import SandboxRunner
from trainer.sandbox import (
    AGENT_LIMITS,
    BWRAP_ENVIRONMENT,
    ExecResult,
    HarborBackend,
    HarborSandbox,
    Limits,
    SandboxError,
    default_exposed,
    make_backend,
)
from trainer.tasks import bundled_tasks_path, validate_task

ROOT = Path(__file__).resolve().parents[3]
ENV = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": "/tmp"}


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bundled task, materialised: Harbor's task format as Harbor reads it."""
    return bundled_tasks_path(tmp_path_factory.mktemp("cache")) / "inflection-qa-001"


def _trial(backend: HarborBackend, task: Path, agent: str, trials: Path) -> dict[str, object]:
    """``harbor trial start`` of ``task`` with ``agent``, on the local sandbox."""
    harbor = backend.python.parent / "harbor"
    exposed = json.dumps([str(path) for path in default_exposed()])
    command = [str(harbor), "trial", "start", "-p", str(task), "-a", agent]
    command += ["-e", BWRAP_ENVIRONMENT, "--trials-dir", str(trials)]
    command += ["--environment-kwarg", f"expose={exposed}"]
    command += ["--environment-kwarg", f"path={ENV['PATH']}"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (result,) = trials.glob("*/result.json")
    document: dict[str, object] = json.loads(result.read_text())
    return document


def test_harbors_own_trials_drive_the_local_sandbox(bundled: Path, tmp_path: Path) -> None:
    backend = require_harbor()
    oracle = _trial(backend, bundled, "oracle", tmp_path / "oracle")
    assert oracle["exception_info"] is None, oracle["exception_info"]
    assert oracle["verifier_result"] == {"rewards": {"reward": 1.0}}
    untouched = _trial(backend, bundled, "nop", tmp_path / "nop")
    assert untouched["exception_info"] is None, untouched["exception_info"]
    assert untouched["verifier_result"] == {"rewards": {"reward": 0.0}}


def test_a_bundled_task_validates_through_the_harbor_backend(bundled: Path, tmp_path: Path) -> None:
    runner = SandboxRunner(require_harbor())
    report = validate_task(bundled, runner)
    assert report.valid, report.problems
    assert report.untouched is not None and report.untouched.reward == 0.0
    assert report.oracle is not None and report.oracle.reward == 1.0
    broken = tmp_path / "broken"
    shutil.copytree(bundled, broken)
    (broken / "solution" / "solve.sh").write_text(
        "#!/bin/bash\necho 'not the answer' > answer.txt\n"
    )
    report = validate_task(broken, runner)
    assert not report.valid and "the oracle does not pass" in " ".join(report.problems)


def test_a_harbor_sandbox_keeps_the_hidden_tests_out_and_its_limits(tmp_path: Path) -> None:
    backend = require_harbor()
    task = make_task(tmp_path / "tasks")

    async def scenario() -> None:
        sandbox = await backend.create(task.workspace, workdir="/workspace", rollout_id="h1")
        assert isinstance(sandbox, HarborSandbox)

        async def run(script: str, limits: Limits = AGENT_LIMITS) -> ExecResult:
            return await sandbox.exec(["bash", "-c", script], env=ENV, limits=limits)

        probe = await run(f"ls /tests {task.tests_dir} 2>&1; grep -rl '{HIDDEN_MARK}' /workspace")
        assert probe.output.count("No such file or directory") == 2
        assert HIDDEN_MARK not in probe.output and probe.cgroup
        await run("echo changed > calc.py")
        assert await sandbox.read("/workspace/calc.py") == b"changed\n"
        assert "changed" not in (task.workspace / "calc.py").read_text()  # a copy
        planted = await run("echo 1 > /logs/verifier/reward.txt")  # Harbor's /logs is there
        assert planted.returncode == 0
        logs = tmp_path / "logs"
        (logs / "verifier").mkdir(parents=True)
        await sandbox.add(logs, "/logs", writable=True)  # what the verifier gets: fresh
        assert await sandbox.read("/logs/verifier/reward.txt") is None
        assert (await run("ls /logs/verifier")).stdout == ""
        await sandbox.add(task.tests_dir, "/tests")
        verifier = await run("cat /tests/test_calc.py; echo x > /tests/test_calc.py")
        assert HIDDEN_MARK in verifier.output and "Read-only file system" in verifier.output
        slow = await run("sleep 30", Limits(wall_seconds=1.0))
        assert slow.timed_out and slow.returncode is None
        await sandbox.close()
        with pytest.raises(SandboxError):  # its worker and environment are gone
            await run("true")

    asyncio.run(scenario())


def test_what_harbor_cannot_host_is_a_clear_sandbox_error(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="install-harbor"):
        HarborBackend(python=tmp_path / "missing" / "python").check()
    backend = require_harbor()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    broken = HarborBackend("no_such_module:Environment", python=backend.python)
    with pytest.raises(SandboxError, match=r"harbor \(start\).*no_such_module"):
        asyncio.run(broken.create(workspace, workdir="/workspace", rollout_id="x"))
    with pytest.raises(SandboxError, match="absolute"):
        asyncio.run(backend.create(workspace, workdir="relative", rollout_id="x"))
    with pytest.raises(SandboxError, match="unknown sandbox 'docker'"):
        make_backend("docker")
    with pytest.raises(SandboxError, match="harbor sandbox only"):
        make_backend("local", harbor_environment="docker")
    assert make_backend({"name": "harbor", "environment": "docker"}).environment == "docker"  # type: ignore[attr-defined]


def test_the_modules_run_in_harbors_venv_export_what_they_define() -> None:
    backend = require_harbor()
    check = (
        "import importlib\n"
        "for name in ('_harbor_env', '_harbor_worker'):\n"
        "    module = importlib.import_module(f'trainer.sandbox.{name}')\n"
        "    assert module.__all__ and all(hasattr(module, n) for n in module.__all__), name\n"
        "    print(name, *module.__all__)\n"
    )
    done = subprocess.run(
        [str(backend.python), "-c", check],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["_harbor_env BwrapEnvironment", "_harbor_worker main"]
