"""Writing a generated task in Harbor's format: ``task.toml``, ``instruction.md``,
``environment/`` (a Dockerfile and the workspace), ``tests/`` (``test.sh``, the standalone
``check.py``, ``spec.json`` and the hidden files) and ``solution/`` (the oracle's files)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from trainer.tasks._config import Difficulty, TaskClass

__all__ = ["DOCKERFILE", "TaskDraft", "toml_document", "write_task"]

DOCKERFILE = """FROM python:3.11-slim
RUN pip install --no-cache-dir pytest
WORKDIR /app
COPY workspace/ /app/
"""
TEST_SH = """#!/bin/bash
# Written by `safeagents tasks generate`: the checks are in check.py, next to this script.
exec python "$(dirname "$0")/check.py"
"""
SOLVE_FILES = """#!/bin/bash
# The oracle: the repository's original files.
cp -r "$(dirname "$0")/files/." .
"""
SOLVE_ANSWER = """#!/bin/bash
# The oracle: the value the repository's code computes.
cp "$(dirname "$0")/answer.txt" answer.txt
"""
CHECK_SCRIPT = Path(__file__).with_name("_check_script.py")
TomlValue = str | int | float | bool | list[str]


@dataclass(slots=True)
class TaskDraft:
    """A task before it is written: ``workspace`` maps a path to its new content (``None``:
    deleted) over the repository; ``hidden`` and ``oracle`` are files of the repository."""

    task_class: TaskClass
    target: str
    instruction: str
    difficulty: Difficulty
    lines_removed: int
    tests_involved: int
    workspace: dict[str, str | None] = field(default_factory=dict)
    hidden: list[str] = field(default_factory=list)
    node_ids: list[str] = field(default_factory=list)
    oracle: list[str] = field(default_factory=list)
    expected: str | None = None
    """For QA: the ``repr`` of the answer."""


def _toml_value(value: TomlValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_document(tables: Mapping[str, Mapping[str, TomlValue]]) -> str:
    """TOML for flat tables of scalars and string lists (a table named ``""`` is the top)."""
    parts = []
    for name, values in tables.items():
        lines = [f"[{name}]"] if name else []
        lines += [f"{key} = {_toml_value(value)}" for key, value in values.items()]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def write_task(
    draft: TaskDraft,
    destination: Path,
    repository_root: Path,
    config: Mapping[str, Mapping[str, TomlValue]],
    *,
    test_timeout: float,
) -> Path:
    """The task directory at ``destination`` (which must not exist)."""
    workspace = destination / "environment" / "workspace"
    shutil.copytree(
        repository_root,
        workspace,
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    (destination / "environment" / "Dockerfile").write_text(DOCKERFILE, encoding="utf-8")
    for relative, content in draft.workspace.items():
        if content is None:
            (workspace / relative).unlink(missing_ok=True)
        else:
            (workspace / relative).write_text(content, encoding="utf-8")
    tests = destination / "tests"
    tests.mkdir()
    (tests / "test.sh").write_text(TEST_SH, encoding="utf-8")
    shutil.copyfile(CHECK_SCRIPT, tests / "check.py")
    spec: dict[str, object] = (
        {"kind": "answer", "expected": draft.expected}
        if draft.expected is not None
        else {
            "kind": "tests",
            "files": draft.hidden,
            "node_ids": draft.node_ids,
            "timeout": test_timeout,
        }
    )
    (tests / "spec.json").write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
    solution = destination / "solution"
    solution.mkdir()
    if draft.expected is not None:
        (solution / "solve.sh").write_text(SOLVE_ANSWER, encoding="utf-8")
        (solution / "answer.txt").write_text(draft.expected + "\n", encoding="utf-8")
    else:
        (solution / "solve.sh").write_text(SOLVE_FILES, encoding="utf-8")
    for directory, files in ((tests / "files", draft.hidden), (solution / "files", draft.oracle)):
        for relative in files:
            (directory / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(repository_root / relative, directory / relative)
    (destination / "instruction.md").write_text(draft.instruction, encoding="utf-8")
    (destination / "task.toml").write_text(toml_document(config), encoding="utf-8")
    return destination
