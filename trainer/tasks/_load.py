"""Task directories in Harbor's format, loaded and checked::

    <task>/task.toml          the config (:class:`TaskConfig`)
    <task>/instruction.md     the prompt
    <task>/environment/       the container's build context; the agent's workspace is
                              ``environment/workspace/`` when it exists, else ``environment/``
                              without its Dockerfile and compose files
    <task>/tests/test.sh      the verifier: run in the workspace after the agent exits, never
                              visible to the agent; it writes the reward to
                              ``$SAFEAGENTS_VERIFIER_LOGS`` (``/logs/verifier`` in Harbor)
    <task>/solution/solve.sh  the oracle (optional for loading, required by ``tasks validate``)

A problem is reported with its file, and for ``task.toml`` with its line and column.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from trainer.tasks._bundle import BundleError, is_bundle, materialize_bundle, resolve_task_path
from trainer.tasks._config import TaskConfig

__all__ = [
    "CONFIG",
    "INSTRUCTION",
    "WORKSPACE_EXCLUDED",
    "Task",
    "TaskDirError",
    "find_task_dirs",
    "load_task",
    "load_tasks",
]

CONFIG = "task.toml"
INSTRUCTION = "instruction.md"
WORKSPACE_EXCLUDED = frozenset(
    {"Dockerfile", "docker-compose.yaml", "docker-compose.yml", "singularity-compose.yaml"}
)


class TaskDirError(ValueError):
    """Tasks with problems; ``problems`` lists every one of them, each naming its file."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("bad tasks:\n" + "\n".join(f"  {p}" for p in self.problems))


@dataclass(frozen=True, slots=True)
class Task:
    """One task directory: its id (the directory name), config and prompt."""

    id: str
    root: Path
    config: TaskConfig
    instruction: str

    @property
    def environment_dir(self) -> Path:
        return self.root / "environment"

    @property
    def workspace(self) -> Path:
        """What every rollout gets a fresh copy of (see the module docstring)."""
        nested = self.environment_dir / "workspace"
        return nested if nested.is_dir() else self.environment_dir

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def test_script(self) -> Path:
        return self.tests_dir / "test.sh"

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"

    @property
    def solve_script(self) -> Path:
        return self.solution_dir / "solve.sh"

    @property
    def has_oracle(self) -> bool:
        return self.solve_script.is_file()

    @property
    def held_out(self) -> bool:
        return self.config.metadata.safeagents.held_out

    @property
    def name(self) -> str:
        """The package name (``[task] name``), else the id."""
        return self.config.task.name if self.config.task is not None else self.id


def _key_position(text: str, location: Sequence[str | int]) -> tuple[int, int] | None:
    """Where ``location`` (a pydantic error's path) is written in ``text``: the line and
    column of its key, or of its table's header; ``None`` when it is not written at all."""
    keys = [str(part) for part in location]
    best: tuple[int, int] | None = None
    table: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("["):
            table = [part.strip().strip("\"'") for part in line.strip("[]").split(".")]
            if keys[: len(table)] == table:
                best = (number, raw.index("[") + 1)
            continue
        key, equals, _ = line.partition("=")
        if not equals or line.startswith("#"):
            continue
        dotted = table + [part.strip().strip("\"'") for part in key.split(".")]
        if dotted and keys[: len(dotted)] == dotted:
            return number, raw.index(key.strip()[0]) + 1
    return best


def _config_problems(path: Path, text: str, problem: ValidationError) -> list[str]:
    found = []
    for error in problem.errors(include_url=False):
        location = [part for part in error["loc"] if part != "[key]"]
        where = _key_position(text, location)
        position = f":{where[0]}:{where[1]}" if where else ""
        dotted = ".".join(str(part) for part in location) or "(top level)"
        found.append(f"{path}{position}: {dotted}: {error['msg']}")
    return found


def _read_config(root: Path) -> tuple[TaskConfig | None, list[str]]:
    path = root / CONFIG
    if not path.is_file():
        return None, [f"{root}: missing {CONFIG} (Harbor's task config)"]
    try:
        text = path.read_text(encoding="utf-8")
        document = tomllib.loads(text)
    except UnicodeDecodeError as problem:
        return None, [f"{path}: not UTF-8 text ({problem.reason})"]
    except tomllib.TOMLDecodeError as problem:
        message = str(problem)
        line, found, rest = message.partition(" (at line ")
        if found:
            where = rest.rstrip(")").replace(", column ", ":")
            return None, [f"{path}:{where}: invalid TOML: {line}"]
        return None, [f"{path}: invalid TOML: {message}"]
    except OSError as problem:
        return None, [f"{path}: cannot read: {problem.strerror}"]
    problems = []
    if document.get("steps"):
        problems.append(f"{path}: multi-step tasks ([[steps]]) are not supported")
    try:
        return TaskConfig.model_validate(document), problems
    except ValidationError as invalid:
        return None, problems + _config_problems(path, text, invalid)


def _script_problems(script: Path, role: str) -> list[str]:
    if not script.is_file():
        bat = script.with_suffix(".bat")
        extra = " (Windows tasks are not supported)" if bat.is_file() else ""
        return [
            f"{script.parent.parent}: missing {script.parent.name}/{script.name} ({role}){extra}"
        ]
    if script.is_symlink():
        return [f"{script}: a symbolic link; the {role} must be a file of the task"]
    return []


def _structure_problems(root: Path) -> list[str]:
    problems = []
    instruction = root / INSTRUCTION
    if not instruction.is_file():
        problems.append(f"{root}: missing {INSTRUCTION} (the prompt)")
    if not (root / "environment").is_dir():
        problems.append(f"{root}: missing environment/ (the workspace and its Dockerfile)")
    problems += _script_problems(root / "tests" / "test.sh", "the verifier")
    if (root / "solution").exists():
        problems += _script_problems(root / "solution" / "solve.sh", "the oracle")
    return problems


def load_task(root: str | Path) -> Task:
    """The task in ``root``, or :class:`TaskDirError` listing every problem of it."""
    base = Path(root)
    if not base.is_dir():
        raise TaskDirError([f"{base}: not a directory"])
    config, problems = _read_config(base)
    problems += _structure_problems(base)
    instruction = ""
    if (base / INSTRUCTION).is_file():
        try:
            instruction = (base / INSTRUCTION).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError) as problem:
            problems.append(f"{base / INSTRUCTION}: unreadable: {problem}")
        else:
            if not instruction.strip():
                problems.append(f"{base / INSTRUCTION}: empty prompt")
    if problems or config is None:
        raise TaskDirError(problems)
    return Task(base.name, base.resolve(), config, instruction)


def _is_task(path: Path) -> bool:
    return (path / CONFIG).is_file() or (path / INSTRUCTION).is_file()


def find_task_dirs(path: str | Path) -> list[Path]:
    """``path`` itself when it is a task, else its task subdirectories (sorted; dot-dirs
    skipped), else its subdirectories' (a directory of datasets), one level more. A bundle
    (``bundle.toml``), its ``tasks/`` or one of its tasks stands for its materialised task
    folders; a bundle that cannot be materialised raises :class:`TaskDirError`."""
    try:
        return _find_task_dirs(resolve_task_path(Path(path)))
    except BundleError as problem:
        raise TaskDirError([str(problem)]) from None


def _find_task_dirs(base: Path) -> list[Path]:
    if _is_task(base):
        return [base]
    if not base.is_dir():
        return []
    children = sorted(c for c in base.iterdir() if c.is_dir() and not c.name.startswith("."))
    tasks = [child for child in children if _is_task(child)]
    if tasks:
        return tasks
    children = [materialize_bundle(c) if is_bundle(c) else c for c in children]
    return [
        grandchild
        for child in children
        for grandchild in sorted(child.iterdir())
        if grandchild.is_dir() and not grandchild.name.startswith(".") and _is_task(grandchild)
    ]


def load_tasks(paths: str | Path | Iterable[str | Path]) -> list[Task]:
    """Every task under ``paths`` (task directories or directories of them), or
    :class:`TaskDirError` listing every problem of every task, and duplicate ids."""
    roots = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    problems: list[str] = []
    tasks: list[Task] = []
    for root in roots:
        try:
            found = find_task_dirs(root)
        except TaskDirError as bad:
            problems += bad.problems
            continue
        if not found:
            state = "not a directory" if not Path(root).is_dir() else "no tasks in it"
            problems.append(f"{root}: {state} (a task has {CONFIG} and {INSTRUCTION})")
        for task_dir in found:
            try:
                tasks.append(load_task(task_dir))
            except TaskDirError as bad:
                problems += bad.problems
    seen: dict[str, Path] = {}
    for task in tasks:
        if task.id in seen and seen[task.id] != task.root:
            problems.append(f"{task.root}: task id {task.id!r} also names {seen[task.id]}")
        seen.setdefault(task.id, task.root)
    if problems:
        raise TaskDirError(problems)
    return tasks
