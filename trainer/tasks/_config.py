"""``task.toml``, typed: Harbor's sections (``[task]``, ``[metadata]``, ``[verifier]``,
``[agent]``, ``[environment]``, ``[solution]``) and safeagents' own ``[metadata.safeagents]``.

Keys this model does not name are kept (``extra="allow"``), so a dataset written for Harbor
or by Repo2RLEnv loads unchanged; the keys it names are checked.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "DIFFICULTIES",
    "TASK_CLASSES",
    "AgentSection",
    "Difficulty",
    "EnvironmentSection",
    "PackageSection",
    "SafeagentsMetadata",
    "SolutionSection",
    "TaskClass",
    "TaskConfig",
    "TaskMetadata",
    "VerifierSection",
]

Difficulty = Literal["easy", "medium", "hard", "unknown"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard", "unknown")
TaskClass = Literal["repair", "qa", "build", "extend"]
TASK_CLASSES: tuple[TaskClass, ...] = ("repair", "qa", "build", "extend")


class _Open(BaseModel):
    """A section that keeps the keys it does not name."""

    model_config = ConfigDict(extra="allow")


def _finite_positive(value: float | None) -> float | None:
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise ValueError("must be a positive number of seconds")
    return value


class PackageSection(_Open):
    """``[task]``: the package name (``org/name``) and what describes it."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
    version: str | None = None
    description: str = ""
    keywords: list[str] = Field(default_factory=list)


class SafeagentsMetadata(BaseModel):
    """``[metadata.safeagents]``: what the generator recorded (all optional for hand-made
    tasks). ``held_out`` tasks are for evaluation only: training refuses them."""

    model_config = ConfigDict(extra="forbid")

    task_class: TaskClass | None = None
    repository: str | None = None
    held_out: bool = False
    generator: str | None = None
    seed: int | None = None
    lines_removed: int | None = Field(default=None, ge=0)
    tests_involved: int | None = Field(default=None, ge=0)
    target: str | None = None
    """What the task is about (``module.py:function``), for people reading a dataset."""


class TaskMetadata(_Open):
    """``[metadata]``: free-form in Harbor; ``difficulty``, ``category`` and ``tags`` follow
    Harbor's conventions, ``safeagents`` is ours."""

    difficulty: Difficulty = "unknown"
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    safeagents: SafeagentsMetadata = Field(default_factory=SafeagentsMetadata)

    @field_validator("difficulty", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class VerifierSection(_Open):
    """``[verifier]``: how long ``tests/test.sh`` may run, and its extra environment."""

    timeout_sec: float = 600.0
    env: dict[str, str] = Field(default_factory=dict)

    _positive = field_validator("timeout_sec")(_finite_positive)


class AgentSection(_Open):
    """``[agent]``: how long the agent may run (``None``: the runner's default)."""

    timeout_sec: float | None = None

    _positive = field_validator("timeout_sec")(_finite_positive)


class EnvironmentSection(_Open):
    """``[environment]``: the container Harbor builds, and the limits a sandbox applies."""

    docker_image: str | None = None
    build_timeout_sec: float = 600.0
    os: Literal["linux"] = "linux"
    cpus: float | None = Field(default=None, gt=0)
    memory_mb: int | None = Field(default=None, gt=0)
    storage_mb: int | None = Field(default=None, gt=0)
    workdir: str | None = None
    network_mode: Literal["no-network", "public", "allowlist"] | None = None
    allow_internet: bool | None = None
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("os", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value


class SolutionSection(_Open):
    """``[solution]``: the oracle's extra environment."""

    env: dict[str, str] = Field(default_factory=dict)


class TaskConfig(_Open):
    """The whole ``task.toml`` (every section optional, as in Harbor)."""

    schema_version: str = "1.4"
    task: PackageSection | None = None
    metadata: TaskMetadata = Field(default_factory=TaskMetadata)
    verifier: VerifierSection = Field(default_factory=VerifierSection)
    agent: AgentSection = Field(default_factory=AgentSection)
    environment: EnvironmentSection = Field(default_factory=EnvironmentSection)
    solution: SolutionSection = Field(default_factory=SolutionSection)
    source: str | None = None
