"""Tasks in Harbor's layout for the sandbox tests, and a skip when bubblewrap cannot run."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from trainer.sandbox import LocalBackend, SandboxError

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b  # was a - b\n"
HIDDEN_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PROMPT = "add() in calc.py is wrong: add(2, 3) should be 5. Fix calc.py."
TEST_SH = """#!/bin/bash
cp "$SAFEAGENTS_TESTS_DIR/test_hidden.py" /tmp/test_hidden.py
if python -m pytest -q -p no:cacheprovider --rootdir=. /tmp/test_hidden.py; then
  echo 1 > "$SAFEAGENTS_VERIFIER_LOGS/reward.txt"
else
  echo 0 > "$SAFEAGENTS_VERIFIER_LOGS/reward.txt"
fi
"""


@dataclass(frozen=True, slots=True)
class DirTask:
    """A task directory: ``instruction.md``, ``environment/`` (the workspace), ``tests/``."""

    root: Path

    @property
    def id(self) -> str:
        return self.root.name

    @property
    def instruction(self) -> str:
        return (self.root / "instruction.md").read_text()

    @property
    def workspace(self) -> Path:
        return self.root / "environment"

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def test_script(self) -> Path:
        return self.tests_dir / "test.sh"


def make_task(tasks_dir: Path, task_id: str = "fix-add", test_sh: str = TEST_SH) -> DirTask:
    """A repair task: calc.py subtracts; the hidden test wants a sum."""
    root = tasks_dir / task_id
    (root / "environment").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "environment" / "calc.py").write_text(BUGGY)
    (root / "environment" / "conftest.py").write_text("# the project root on sys.path\n")
    (root / "instruction.md").write_text(PROMPT)
    (root / "tests" / "test_hidden.py").write_text(HIDDEN_TEST)
    (root / "tests" / "test.sh").write_text(test_sh)
    return DirTask(root)


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
