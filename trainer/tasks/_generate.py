"""``tasks generate``: tasks of the four classes from a local repository with a pytest suite.

The suite runs once, traced, to learn which passing tests call which function; functions are
then tried in an order fixed by the seed, the classes taking turns until ``limit`` tasks are
written. Every task written is validated (oracle passes, untouched workspace fails) and
removed if it is not.
Tasks are named ``<repository>-<class>-<n>`` and record their class, difficulty, repository
and split in ``[metadata.safeagents]``: a repository is held out as a whole.
"""

from __future__ import annotations

import random
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trainer.tasks._classes import DRAFTERS, Rejected
from trainer.tasks._config import TASK_CLASSES, TaskClass
from trainer.tasks._repo import Repository, RepositoryError, scan_repository
from trainer.tasks._validate import TaskReport, validate_task
from trainer.tasks._write import TaskDraft, TomlValue, write_task

__all__ = ["GenerateOptions", "GenerateResult", "RepositoryError", "generate_tasks"]

GENERATOR = "safeagents tasks generate"
_UNSAFE = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class GenerateOptions:
    repo: Path
    out: Path
    classes: Sequence[TaskClass] = TASK_CLASSES
    limit: int = 20
    seed: int = 0
    held_out: bool = False
    name: str | None = None
    """The repository's name in task ids and metadata (default: its directory's)."""
    test_timeout: float = 120.0
    agent_timeout: float = 1200.0


@dataclass(slots=True)
class GenerateResult:
    written: list[Path] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)
    invalid: list[TaskReport] = field(default_factory=list)
    by_class: Counter[str] = field(default_factory=Counter)


Progress = Callable[[str], None]


def _config(
    draft: TaskDraft, task_id: str, repo: Repository, options: GenerateOptions
) -> dict[str, dict[str, TomlValue]]:
    return {
        "": {"schema_version": "1.4"},
        "task": {
            "name": f"safeagents/{task_id}",
            "description": f"{draft.task_class} task from {repo.name}: {draft.target}",
            "keywords": ["python", draft.task_class, repo.name],
        },
        "metadata": {
            "difficulty": draft.difficulty,
            "category": draft.task_class,
            "tags": ["python", "generated", draft.task_class],
        },
        "metadata.safeagents": {
            "task_class": draft.task_class,
            "repository": repo.name,
            "held_out": options.held_out,
            "generator": GENERATOR,
            "seed": options.seed,
            "lines_removed": draft.lines_removed,
            "tests_involved": draft.tests_involved,
            "target": draft.target,
        },
        "verifier": {"timeout_sec": float(options.test_timeout + 60)},
        "agent": {"timeout_sec": float(options.agent_timeout)},
        "environment": {"build_timeout_sec": 600.0, "cpus": 1, "memory_mb": 2048},
    }


def _drafts(
    repo: Repository, task_class: TaskClass, options: GenerateOptions, result: GenerateResult
) -> Iterator[TaskDraft]:
    """The drafts of one class, function by function in the seed's order."""
    rng = random.Random(f"{options.seed}:{task_class}")
    functions = [f for f in repo.functions if f.label in repo.callers]
    rng.shuffle(functions)
    for function in functions:
        try:
            yield DRAFTERS[task_class](repo, function, rng)
        except Rejected as why:
            result.rejected[f"{task_class}: {why}"] += 1
        except (SyntaxError, UnicodeDecodeError, OSError) as problem:  # a file of the repo
            result.rejected[f"{task_class}: {type(problem).__name__}: {problem}"] += 1


def generate_tasks(
    options: GenerateOptions,
    *,
    on_note: Progress | None = None,
    on_task: Callable[[TaskClass], None] | None = None,
) -> GenerateResult:
    """Write up to ``options.limit`` valid tasks under ``options.out``, one class after the
    other in turn (a class that runs out leaves its turns to the others)."""
    note = on_note or (lambda _: None)
    result = GenerateResult()
    options.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="safeagents-generate-"))
    try:
        note(f"running the test suite of {options.repo}")
        repo = scan_repository(options.repo, scratch)
        repo.name = options.name or repo.name
        prefix = _UNSAFE.sub("-", repo.name.lower()).strip("-") or "repo"
        turns = {name: _drafts(repo, name, options, result) for name in options.classes}
        while turns and len(result.written) < options.limit:
            for task_class, drafts in list(turns.items()):
                if len(result.written) >= options.limit:
                    break
                note(f"{task_class}: looking for a task")
                written = _next_valid(drafts, task_class, repo, prefix, options, result, note)
                if written is None:
                    del turns[task_class]
                elif on_task is not None:
                    on_task(task_class)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def _next_valid(
    drafts: Iterator[TaskDraft],
    task_class: TaskClass,
    repo: Repository,
    prefix: str,
    options: GenerateOptions,
    result: GenerateResult,
    note: Progress,
) -> Path | None:
    """The next draft of ``drafts`` written and validated, or ``None`` when none is left."""
    for draft in drafts:
        task_id = f"{prefix}-{task_class}-{result.by_class[task_class] + 1:03d}"
        destination = options.out / task_id
        if destination.exists():
            shutil.rmtree(destination)
        config = _config(draft, task_id, repo, options)
        write_task(draft, destination, repo.root, config, test_timeout=options.test_timeout)
        note(f"{task_class}: validating {task_id}")
        report = validate_task(destination)
        if not report.valid:
            result.invalid.append(report)
            result.rejected[f"{task_class}: the task did not validate"] += 1
            shutil.rmtree(destination)
            continue
        result.written.append(destination)
        result.by_class[task_class] += 1
        return destination
    return None
