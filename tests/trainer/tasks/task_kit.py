"""Harbor-format task directories for the tasks tests: one small Python project whose hidden
test passes only once ``double`` is fixed, and its oracle."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

TASK_TOML = """schema_version = "1.4"

[task]
name = "safeagents/fix-double"

[metadata]
difficulty = "easy"
category = "repair"

[verifier]
timeout_sec = 60.0

[agent]
timeout_sec = 120.0
"""
BROKEN = "def double(x):\n    return x + 2\n"
FIXED = "def double(x):\n    return x * 2\n"
HIDDEN_TEST = "from mathy import double\n\n\ndef test_double():\n    assert double(5) == 10\n"
TEST_SH = """#!/bin/bash
tests="${SAFEAGENTS_TESTS_DIR:-/tests}"
logs="${SAFEAGENTS_VERIFIER_LOGS:-/logs/verifier}"
if python -m pytest -q -p no:cacheprovider "$tests/test_hidden.py"; then
  echo 1 > "$logs/reward.txt"
else
  echo 0 > "$logs/reward.txt"
fi
"""
SOLVE_SH = 'cp "$(dirname "$0")/mathy.py" mathy.py\n'


def write_task(
    root: Path,
    *,
    toml: str | None = TASK_TOML,
    instruction: str | None = "Fix `double` in mathy.py.",
    files: Mapping[str, str] | None = None,
    nested_workspace: bool = True,
    test_sh: str | None = TEST_SH,
    solve_sh: str | None = SOLVE_SH,
) -> Path:
    """A task at ``root``; pass ``None`` to leave a part out."""
    root.mkdir(parents=True)
    environment = root / "environment"
    workspace = environment / "workspace" if nested_workspace else environment
    workspace.mkdir(parents=True)
    (environment / "Dockerfile").write_text("FROM python:3.11-slim\nWORKDIR /app\n")
    for name, content in (files or {"mathy.py": BROKEN}).items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(content)
    if toml is not None:
        (root / "task.toml").write_text(toml)
    if instruction is not None:
        (root / "instruction.md").write_text(instruction)
    if test_sh is not None:
        (root / "tests").mkdir()
        (root / "tests" / "test.sh").write_text(test_sh)
        (root / "tests" / "test_hidden.py").write_text(HIDDEN_TEST)
    if solve_sh is not None:
        (root / "solution").mkdir()
        (root / "solution" / "solve.sh").write_text(solve_sh)
        (root / "solution" / "mathy.py").write_text(FIXED)
    return root
