"""Evaluating checkpoints: the base model and kept adapter versions of one harness, served
side by side by one vLLM server, each run through the same held-out tasks.

A checkpoint is ``base`` or ``{harness}-v{k}``; version ``k`` is the adapter the trainer
kept at ``output_dir/{harness}/v{k}/`` (``version.json`` records its step). Every
checkpoint's rollouts go to ``{out}/{checkpoint}.jsonl``, one line per rollout, through the
rollout driver: a rollout already recorded there is never run again, so re-running an
evaluation starts no session for what it has, and a stopped one resumes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from safeagents.store import Store
from trainer._batching import BASE_VERSION, adapter_name, parse_version
from trainer._config import TrainerConfig
from trainer._driver import ResultsLog, RunSummary, drive, runner_from_config
from trainer._environment import Environment, Task
from trainer._publish import VERSION_FILE
from trainer._scheduler import RolloutResult

__all__ = [
    "BASE",
    "REPORT_JSON",
    "Checkpoint",
    "CheckpointError",
    "CheckpointReport",
    "ServesAdapters",
    "check_results",
    "evaluate_checkpoint",
    "read_lines",
    "resolve_checkpoints",
    "serve_checkpoints",
    "summarise",
]

BASE = "base"
REPORT_JSON = "eval.json"
"""The report ``safeagents eval`` writes in its results directory."""
_ADAPTER_CONFIG = "adapter_config.json"


class CheckpointError(ValueError):
    """Checkpoints that cannot be evaluated; ``problems`` names each."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One model to evaluate: its name on the command line and in vLLM, and its adapter."""

    name: str
    served: str
    """The model name vLLM serves it under (the base model's served name for ``base``)."""
    version: int
    path: Path | None = None
    """The adapter directory; ``None`` for the base model."""
    step: int | None = None
    """The optimiser step whose weights the adapter holds (``version.json``), if recorded."""


class ServesAdapters(Protocol):
    """vLLM's model list and runtime LoRA loading (:class:`trainer.VLLMAdmin`)."""

    def models(self) -> list[str]: ...

    def load_adapter(self, name: str, path: Path) -> None: ...


def _kept_versions(adapters: Path) -> list[str]:
    if not adapters.is_dir():
        return []
    found = [
        (version, entry.name)
        for entry in adapters.iterdir()
        if entry.name.startswith("v")
        and entry.name[1:].isdigit()
        and (entry / _ADAPTER_CONFIG).is_file()
        for version in [int(entry.name[1:])]
    ]
    return [name for _, name in sorted(found)]


def _step_of(path: Path) -> int | None:
    try:
        info = json.loads((path / VERSION_FILE).read_text())
    except (OSError, ValueError):
        return None
    step = info.get("step") if isinstance(info, dict) else None
    return step if isinstance(step, int) else None


def resolve_checkpoints(
    names: Sequence[str], *, harness: str, base_served: str, output_dir: Path
) -> list[Checkpoint]:
    """The checkpoints ``names`` stand for, in order; :class:`CheckpointError` listing every
    unknown name, duplicate, other harness's adapter and missing adapter directory."""
    problems: list[str] = []
    checkpoints: list[Checkpoint] = []
    adapters = output_dir / harness
    seen: set[int] = set()
    if not names:
        problems.append("no checkpoints given")
    for name in names:
        version = BASE_VERSION if name == BASE else parse_version(name, harness)
        if version is None:
            other = parse_version(name)
            problems.append(
                f"{name!r} is an adapter of another harness, not {harness}"
                if other is not None
                else f"unknown checkpoint {name!r}: expected {BASE} or {harness}-v<k>"
            )
            continue
        if version in seen:
            problems.append(f"checkpoint {name!r} given twice")
            continue
        seen.add(version)
        if version == BASE_VERSION:
            checkpoints.append(Checkpoint(name=name, served=base_served, version=version))
            continue
        path = adapters / f"v{version}"
        if not (path / _ADAPTER_CONFIG).is_file():
            kept = ", ".join(f"{harness}-{v}" for v in _kept_versions(adapters)) or "none"
            problems.append(
                f"missing adapter for {name!r}: no {path / _ADAPTER_CONFIG} (kept: {kept})"
            )
            continue
        served = adapter_name(harness, version)
        checkpoints.append(Checkpoint(name, served, version, path, _step_of(path)))
    if problems:
        raise CheckpointError(problems)
    return checkpoints


def serve_checkpoints(server: ServesAdapters, checkpoints: Iterable[Checkpoint]) -> list[str]:
    """Load every adapter ``server`` does not serve yet; the names loaded. A
    :class:`CheckpointError` when the server does not serve the base model they share."""
    served = set(server.models())
    loaded: list[str] = []
    for checkpoint in checkpoints:
        if checkpoint.path is None:
            if checkpoint.served not in served:
                raise CheckpointError(
                    [
                        f"vLLM serves {sorted(served)}, not the base model {checkpoint.served!r}"
                        " (vllm.served_model or base_model in the config)"
                    ]
                )
            continue
        if checkpoint.served not in served:
            server.load_adapter(checkpoint.served, checkpoint.path)
            served.add(checkpoint.served)
            loaded.append(checkpoint.served)
    return loaded


def check_results(checkpoint: Checkpoint, results: Path) -> None:
    """Record which weights ``results`` (a checkpoint's JSONL) holds rollouts of, beside it;
    a :class:`CheckpointError` when they were made with other weights under the same name
    (an adapter retrained since)."""
    stamp = results.with_suffix(".checkpoint.json")
    current = {"served": checkpoint.served, "version": checkpoint.version, "step": checkpoint.step}
    try:
        recorded = json.loads(stamp.read_text())
    except (OSError, ValueError):
        recorded = None
    if isinstance(recorded, dict) and recorded != current:
        raise CheckpointError(
            [
                f"{results} holds rollouts of {checkpoint.name} at step {recorded.get('step')}, "
                f"but {checkpoint.name} is now at step {checkpoint.step}: evaluate into a "
                "fresh --out"
            ]
        )
    if recorded is None:
        results.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(json.dumps(current) + "\n")


async def evaluate_checkpoint(
    config: TrainerConfig,
    environment: Environment,
    checkpoint: Checkpoint,
    *,
    store: Store,
    results: Path,
    rollouts: int,
    tasks: Sequence[Task] | None = None,
    concurrency: int | None = None,
    proxy_url: str | None = None,
    on_start: Callable[[Task, int], None] | None = None,
    on_result: Callable[[RolloutResult], None] | None = None,
) -> RunSummary:
    """Run ``rollouts`` rollouts of every task with ``checkpoint`` answering, but those
    ``results`` already records. The proxy's alias for the harness must point at it."""
    runner = runner_from_config(
        config,
        environment,
        store=store,
        proxy_url=proxy_url,
        model=checkpoint.served,
        group_size=rollouts,
        concurrency=concurrency,
    )
    with ResultsLog(results) as log:
        chosen = environment.tasks() if tasks is None else tasks
        return await drive(runner, chosen, log, on_start=on_start, on_result=on_result)


def read_lines(results: Path) -> list[dict[str, Any]]:
    """The rollout lines recorded in ``results`` (none when it does not exist)."""
    if not results.exists():
        return []
    with ResultsLog(results) as log:
        return list(log.previous)


@dataclass(frozen=True, slots=True)
class CheckpointReport:
    """One checkpoint's figures over the tasks evaluated and rollouts ``0..K-1``."""

    checkpoint: str
    served: str
    version: int
    step: int | None
    tasks: int
    rollouts: int
    scored: int
    unscored: int
    failed: int
    pass_at_1: float | None
    """Tasks whose first rollout succeeded, of those whose first rollout was scored."""
    mean_success: float | None
    """Successes over every scored rollout (the mean over K)."""
    tool_calls_mean: float | None
    hack_rate: float | None
    """Rollouts with a finding that counts as a hack, of those read back."""
    tokens_mean: float | None
    """Tokens sampled per scored rollout."""
    tokens_total: int
    session_seconds_mean: float | None
    session_seconds_total: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarise(
    checkpoint: Checkpoint, lines: Iterable[Mapping[str, Any]], task_ids: Sequence[str], k: int
) -> CheckpointReport:
    """The figures of ``checkpoint`` from its rollout lines for ``task_ids``, indices < ``k``."""
    wanted = set(task_ids)
    kept = [line for line in lines if line.get("task_id") in wanted and 0 <= int(line["index"]) < k]
    scored = [line for line in kept if line.get("status") == "scored"]
    read = [line for line in kept if line.get("tool_calls") is not None]
    first = [
        bool(line.get("success"))
        for line in scored
        if int(line["index"]) == 0 and line.get("success") is not None
    ]
    tokens = [int(line.get("tokens") or 0) for line in scored]
    seconds = [float(line.get("seconds") or 0.0) for line in kept]
    return CheckpointReport(
        checkpoint=checkpoint.name,
        served=checkpoint.served,
        version=checkpoint.version,
        step=checkpoint.step,
        tasks=len({line["task_id"] for line in kept}),
        rollouts=len(kept),
        scored=len(scored),
        unscored=sum(line.get("status") == "unscored" for line in kept),
        failed=sum(line.get("status") not in ("scored", "unscored") for line in kept),
        pass_at_1=_mean([float(ok) for ok in first]),
        mean_success=_mean([float(bool(line.get("success"))) for line in scored]),
        tool_calls_mean=_mean([float(line["tool_calls"]) for line in read]),
        hack_rate=_mean([float(bool(line.get("hacked"))) for line in read]),
        tokens_mean=_mean([float(t) for t in tokens]),
        tokens_total=sum(tokens),
        session_seconds_mean=_mean(seconds),
        session_seconds_total=sum(seconds),
    )
