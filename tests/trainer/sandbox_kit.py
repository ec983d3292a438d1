"""A Harbor task with a marked hidden test, and skips when bubblewrap or Harbor cannot run
here."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from harness_env_kit import TEST, make_task_dir

from trainer.sandbox import BWRAP_ENVIRONMENT, HarborBackend, LocalBackend, SandboxError
from trainer.tasks import Task, load_task

HIDDEN_MARK = "# the hidden copy"


def make_task(tasks_dir: Path, task_id: str = "fix-add") -> Task:
    """harness_env_kit's repair task, its hidden test marked so that a leak is visible."""
    root = make_task_dir(tasks_dir, task_id)
    (root / "tests" / "test_calc.py").write_text(f"{TEST}{HIDDEN_MARK}\n")
    return load_task(root)


def require_sandbox(root: Path | None = None) -> LocalBackend:
    """A working local backend, or skip (fail where SAFEAGENTS_REQUIRE_SANDBOX=1)."""
    try:
        if shutil.which("bwrap") is None:
            raise SandboxError("bubblewrap is not installed")
        backend = LocalBackend(root)
        backend.check()
    except SandboxError as problem:
        if os.environ.get("SAFEAGENTS_REQUIRE_SANDBOX") == "1":
            pytest.fail(str(problem))
        pytest.skip(str(problem))
    return backend


def require_harbor() -> HarborBackend:
    """A harbor backend driving the local sandbox, or skip (fail where
    SAFEAGENTS_REQUIRE_SANDBOX=1: scripts/test installs Harbor's venv there)."""
    require_sandbox()
    try:
        backend = HarborBackend(BWRAP_ENVIRONMENT)
        backend.check()
    except SandboxError as problem:
        if os.environ.get("SAFEAGENTS_REQUIRE_SANDBOX") == "1":
            pytest.fail(str(problem))
        pytest.skip(str(problem))
    return backend
