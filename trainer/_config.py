"""The trainer's YAML config: one file, defaults from the design, errors at file:line:col."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeGuard

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from safeagents.protocols import Sampling
from safeagents.rules import Document, NodePath, RuleError, did_you_mean, load_document
from trainer._advantages import DEFAULT_GROUP_SIZE
from trainer._batching import (
    DEFAULT_MAX_STALENESS,
    DEFAULT_PUBLISH_EVERY,
    DEFAULT_TOKEN_BUDGET,
    Staleness,
    StalenessUnit,
)
from trainer._reward import DEFAULT_TOOL_CALL_BONUS, DEFAULT_TOOL_CALL_HORIZON
from trainer.sandbox import SANDBOXES

__all__ = [
    "ConfigError",
    "ConfigIssue",
    "EnvironmentSettings",
    "GRPOSettings",
    "LoraSettings",
    "OptimizerSettings",
    "ProxySettings",
    "RewardSettings",
    "SamplingSettings",
    "TrainerConfig",
    "VLLMSettings",
    "load_config",
]

ALL_LINEAR = "all-linear"
_HARNESS_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _http_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"expected an http(s) URL, got {value!r}")
    return value.rstrip("/")


def _harness_name(name: str) -> str:
    if not name or name[0] in "-_" or not set(name) <= _HARNESS_CHARS:
        raise ValueError(f"harness name {name!r} must be lowercase letters, digits, '-' and '_'")
    return name


HttpURL = Annotated[str, AfterValidator(_http_url)]
HarnessName = Annotated[str, AfterValidator(_harness_name)]


class LoraSettings(_Section):
    """The PEFT LoRA adapter trained per harness."""

    rank: int = Field(default=32, gt=0)
    alpha: int = Field(default=64, gt=0)
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0)
    target_modules: str | tuple[str, ...] = ALL_LINEAR
    """``all-linear``, or a list of module names."""

    @field_validator("target_modules", mode="before")
    @classmethod
    def _targets(cls, value: Any) -> Any:
        if isinstance(value, str) and value != ALL_LINEAR:
            raise ValueError(f"write '{ALL_LINEAR}' or a list of module names")
        if isinstance(value, list):
            if not value or not all(isinstance(name, str) and name for name in value):
                raise ValueError("expected a non-empty list of module names")
            return tuple(value)
        return value


class OptimizerSettings(_Section):
    learning_rate: float = Field(default=1e-5, gt=0.0)
    weight_decay: float = Field(default=0.0, ge=0.0)
    max_grad_norm: float = Field(default=1.0, gt=0.0)


class SamplingSettings(_Section):
    """What every rollout turn samples with: the proxy enforces it on the training sessions'
    requests whatever the harness sends, records it per turn, and turns sampled otherwise
    are not trained. ``top_p`` 1.0 and ``top_k`` 0 (the full distribution) keep the
    importance ratio unbiased: the loss scores tokens at ``temperature`` alone."""

    temperature: float = Field(default=0.8, gt=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    top_k: int = Field(default=0, ge=0)
    """0: off."""
    max_tokens_per_turn: int = Field(default=32_768, gt=0)
    thinking: bool = True
    """The chat template's reasoning (``enable_thinking``), on in training and inference;
    reasoning tokens stay in the trained rows and in multi-turn context."""

    @property
    def enforced(self) -> Sampling:
        """The parameters as the proxy enforces and records them."""
        return Sampling(
            temperature=self.temperature,
            top_p=self.top_p,
            top_k=self.top_k,
            max_tokens=self.max_tokens_per_turn,
            thinking=self.thinking,
        )


class GRPOSettings(_Section):
    group_size: int = Field(default=DEFAULT_GROUP_SIZE, ge=2)
    scale_std: bool = False
    """Divide advantages by the group's reward standard deviation."""
    token_budget: int = Field(default=DEFAULT_TOKEN_BUDGET, gt=0)
    """Tokens per micro-batch; a longer sample is dropped and counted."""
    max_staleness: int = Field(default=DEFAULT_MAX_STALENESS, ge=0)
    """Samples further behind the policy being trained are dropped (see ``staleness_unit``)."""
    staleness_unit: StalenessUnit = "versions"
    """What ``max_staleness`` counts: published ``versions`` or optimiser ``steps``. Each
    sample's staleness in optimiser steps is recorded either way."""
    publish_every: int = Field(default=DEFAULT_PUBLISH_EVERY, gt=0)
    """The policy-sync cadence: optimiser steps between adapter versions published to vLLM."""
    keep_every: int = Field(default=1, ge=0)
    """Keep every Nth published version on disk, with its step and metrics, for evaluation
    (1: all of them; 0: none beyond what serving needs)."""
    max_steps: int = Field(default=200, gt=0)
    """Optimiser steps to run."""
    tasks_per_step: int = Field(default=1, gt=0)
    """Tasks per optimiser step; each gives one group of ``group_size`` rollouts."""

    def staleness(self, *, first_trained: int = 0) -> Staleness:
        """The staleness rule; ``first_trained`` is 1 where v1 is the untrained adapter."""
        return Staleness(self.max_staleness, self.staleness_unit, self.publish_every, first_trained)


class RewardSettings(_Section):
    tool_call_bonus: float = Field(default=DEFAULT_TOOL_CALL_BONUS, ge=0.0)
    tool_call_horizon: int = Field(default=DEFAULT_TOOL_CALL_HORIZON, gt=0)


class VLLMSettings(_Section):
    base_url: HttpURL = "http://127.0.0.1:8000"
    served_model: str | None = None
    """The name vLLM serves the base model under (``--served-model-name``); ``base_model``
    by default. Version 0 of every adapter is this base."""


class EnvironmentSettings(_Section):
    """Where rollouts come from (see ``trainer.Environment``)."""

    factory: str = Field(min_length=3)
    """``module:attribute``, called with ``options`` to make the environment."""
    options: dict[str, Any] = Field(default_factory=dict)
    concurrency: int = Field(default=48, gt=0)
    """Agent sessions live at once; a new one starts as each finishes."""
    group_timeout: float | None = Field(default=1800.0, gt=0)
    """Seconds after a task's first rollout started when its group is released with the
    rollouts that are in (the rest count as late); ``null``: wait for all of them."""
    model: str | None = None
    """The model name the harness asks for; the proxy's alias rewrites it. ``base_model``
    by default."""


class ProxySettings(_Section):
    """Where the scored transcripts come from."""

    admin_url: HttpURL = "http://127.0.0.1:8787/safeagents/v1"
    admin_token_env: str = "SAFEAGENTS_ADMIN_TOKEN"
    """The environment variable holding the admin token (needed beyond loopback)."""
    store: str = "safeagents.db"
    """The proxy's SQLite store (read directly when the trainer runs beside the proxy)."""


class TrainerConfig(_Section):
    """Everything ``safeagents train CONFIG.yaml`` needs."""

    base_model: str = Field(min_length=1)
    harnesses: tuple[HarnessName, ...]
    """One adapter per harness, served as ``{harness}-v{k}``."""
    output_dir: str = "trainer-runs"
    lora: LoraSettings = Field(default_factory=LoraSettings)
    optimizer: OptimizerSettings = Field(default_factory=OptimizerSettings)
    sampling: SamplingSettings = Field(default_factory=SamplingSettings)
    grpo: GRPOSettings = Field(default_factory=GRPOSettings)
    reward: RewardSettings = Field(default_factory=RewardSettings)
    vllm: VLLMSettings = Field(default_factory=VLLMSettings)
    proxy: ProxySettings = Field(default_factory=ProxySettings)
    environment: EnvironmentSettings | None = None
    """Required by ``safeagents train``; the pure data path does not need it."""
    report_to: Literal["auto", "tensorboard", "trackio", "none"] = "auto"
    """Where TRL also reports training metrics (beside the JSONL): ``auto`` picks TensorBoard,
    else trackio, whichever is installed."""

    @field_validator("harnesses")
    @classmethod
    def _unique(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        if not names:
            raise ValueError("list at least one harness to train an adapter for")
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"harness {duplicates[0]!r} is listed twice")
        return names

    @property
    def max_loras(self) -> int:
        """vLLM ``--max-loras``: per harness, the versions in the window plus one loading."""
        return len(self.harnesses) * (self.grpo.staleness().versions_kept + 2)


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """One problem in a config file, at ``file:line:col`` (line 0: no position)."""

    file: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        if self.line <= 0:
            return f"{self.file}: {self.message}"
        return f"{self.file}:{self.line}:{self.col}: {self.message}"


class ConfigError(ValueError):
    """Every problem found in a config file; ``str()`` lists one per line."""

    def __init__(self, issues: Sequence[ConfigIssue]) -> None:
        self.issues = list(issues)
        super().__init__("\n".join(str(issue) for issue in self.issues))


def _issue(error: RuleError) -> ConfigIssue:
    return ConfigIssue(error.file, error.line, error.col, error.message)


def _is_model(annotation: object) -> TypeGuard[type[BaseModel]]:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _section_keys(path: NodePath) -> list[str]:
    """The keys allowed in the mapping at ``path``."""
    model: type[BaseModel] | None = TrainerConfig
    for part in path:
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return []
        annotation = model.model_fields[part].annotation
        model = annotation if _is_model(annotation) else None
    return list(model.model_fields) if model is not None else []


def _validation_issues(document: Document, error: ValidationError) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    for problem in error.errors():
        path: NodePath = tuple(part for part in problem["loc"] if isinstance(part, str | int))
        dotted = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)[1:] or "config"
        key = str(path[-1]) if path else ""
        if problem["type"] == "extra_forbidden":
            hint = did_you_mean(key, _section_keys(path[:-1]))
            found = document.error(path, f"unknown key '{key}'{hint}", key=True)
        elif problem["type"] == "missing":
            found = document.error(path[:-1], f"missing required key '{key}'")
        else:
            message = str(problem["msg"]).removeprefix("Value error, ")
            found = document.error(path, f"{dotted}: {message}")
        issues.append(_issue(found))
    return issues


def load_config(path: str | Path) -> TrainerConfig:
    """Read and validate a trainer config; :class:`ConfigError` lists every problem."""
    try:
        document, duplicates = load_document(Path(path))
    except RuleError as error:
        raise ConfigError([_issue(error)]) from None
    issues = [_issue(duplicate) for duplicate in duplicates]
    data = {} if document.data is None else document.data
    if not isinstance(data, dict):
        issues.append(_issue(document.error((), "the config must be a mapping of keys")))
        raise ConfigError(issues)
    try:
        config = TrainerConfig.model_validate(data)
    except ValidationError as error:
        issues.extend(_validation_issues(document, error))
        issues.sort(key=lambda issue: (issue.line, issue.col))
        raise ConfigError(issues) from None
    if issues:
        raise ConfigError(issues)
    return config


SANDBOX_ENVIRONMENT = "trainer:SandboxEnvironment"


def add_sandbox_argument(parser: Any) -> None:
    """``--sandbox local|harbor``: the backend of the config's ``trainer:SandboxEnvironment``."""
    parser.add_argument(
        "--sandbox",
        choices=SANDBOXES,
        help="the sandbox backend of a trainer:SandboxEnvironment (default: the config's, local)",
    )


def choose_sandbox(config: TrainerConfig, sandbox: str | None) -> None:
    """Make ``sandbox`` the backend of the config's environment (a ``ValueError`` when that
    is not a ``trainer:SandboxEnvironment``)."""
    if sandbox is None:
        return
    if config.environment is None or config.environment.factory != SANDBOX_ENVIRONMENT:
        raise ValueError(f"--sandbox applies to the {SANDBOX_ENVIRONMENT} environment only")
    config.environment.options["backend"] = sandbox
