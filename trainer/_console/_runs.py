"""Finding what the trainer wrote under the directories the console was pointed at.

A training run is a ``metrics-{harness}.jsonl`` in an output directory, with the adapter
versions kept beside it in ``{harness}/v{k}/version.json``; an evaluation is an
``eval.json`` (``safeagents eval``, usually in ``eval-{harness}/``). Each gets a key, the
path of its directory under its root, that the pages use in their URLs: a request names a
key, never a path.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from trainer._eval import REPORT_JSON, CheckpointReport
from trainer._publish import VERSION_FILE

__all__ = [
    "Catalogue",
    "EvalReport",
    "EvalReportError",
    "Evaluation",
    "KeptVersion",
    "Run",
    "find",
    "kept_versions",
    "read_eval_report",
]

_METRICS_PREFIX = "metrics-"
_METRICS_SUFFIX = ".jsonl"
_DEPTH = 3
_VERSION = re.compile(r"v[0-9]{1,18}")
"""Directories below a root that are searched: ``root/experiments/run-1/eval-pi``."""


@dataclass(frozen=True, slots=True)
class Run:
    key: str
    harness: str
    directory: Path

    @property
    def metrics(self) -> Path:
        return self.directory / f"{_METRICS_PREFIX}{self.harness}{_METRICS_SUFFIX}"


@dataclass(frozen=True, slots=True)
class Evaluation:
    key: str
    directory: Path

    @property
    def report(self) -> Path:
        return self.directory / REPORT_JSON


@dataclass(frozen=True, slots=True)
class Catalogue:
    """Runs and evaluations by key, in the order found (roots in order, then by path)."""

    runs: Mapping[str, Run] = field(default_factory=dict)
    evaluations: Mapping[str, Evaluation] = field(default_factory=dict)

    def evaluations_of(self, run: Run) -> list[Evaluation]:
        """The evaluations ``safeagents eval`` wrote in ``run``'s directory for its harness."""
        return [e for e in self.evaluations.values() if e.directory.parent == run.directory]


def find(roots: Sequence[Path]) -> Catalogue:
    """Every run and evaluation in ``roots`` and their subdirectories (three levels deep);
    roots that do not exist or cannot be read contribute nothing."""
    runs: dict[str, Run] = {}
    evaluations: dict[str, Evaluation] = {}
    labels: set[str] = set()
    for root in roots:
        label = _unique(root.name or "runs", labels)
        for directory, names in _walk(root, _DEPTH):
            relative = directory.relative_to(root).as_posix()
            prefix = label if relative == "." else f"{label}/{relative}"
            for name in sorted(names):
                if name.startswith(_METRICS_PREFIX) and name.endswith(_METRICS_SUFFIX):
                    harness = name[len(_METRICS_PREFIX) : -len(_METRICS_SUFFIX)]
                    if harness:
                        key = f"{prefix}/{harness}"
                        runs[key] = Run(key, harness, directory)
            if REPORT_JSON in names:
                evaluations[prefix] = Evaluation(prefix, directory)
    return Catalogue(runs, evaluations)


def _unique(label: str, taken: set[str]) -> str:
    candidate, number = label, 1
    while candidate in taken:
        number += 1
        candidate = f"{label}~{number}"
    taken.add(candidate)
    return candidate


def _walk(directory: Path, depth: int) -> Iterator[tuple[Path, list[str]]]:
    """``(directory, file names)`` for it and its subdirectories, hidden ones and adapter
    versions (``v{k}``) left out."""
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError:
        return
    files = [entry.name for entry in entries if _is_file(entry)]
    yield directory, files
    if depth == 0:
        return
    for entry in entries:
        if _searched(entry):
            yield from _walk(Path(entry.path), depth - 1)


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_version(name: str) -> bool:
    """``v1``, ``v2``…: an adapter version's directory."""
    return _VERSION.fullmatch(name) is not None


def _searched(entry: os.DirEntry[str]) -> bool:
    name = entry.name
    if name.startswith(".") or _is_version(name):
        return False
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class KeptVersion:
    """An adapter version the trainer kept on disk (``version.json``)."""

    name: str
    version: int
    step: int | None
    metrics: Mapping[str, Any]


def kept_versions(run: Run) -> tuple[list[KeptVersion], list[str]]:
    """The versions kept for ``run``'s harness, by version, and a reason for each
    ``version.json`` that could not be read."""
    kept: list[KeptVersion] = []
    problems: list[str] = []
    adapters = run.directory / run.harness
    try:
        candidates = [p for p in adapters.iterdir() if _is_version(p.name)]
    except OSError:
        return kept, problems
    for path in sorted(candidates, key=lambda p: int(p.name[1:])):
        info_path = path / VERSION_FILE
        if not info_path.is_file():
            continue
        try:
            info = json.loads(info_path.read_text(encoding="utf-8"))
            if isinstance(info, dict):
                info.setdefault("version", int(path.name[1:]))
                info.setdefault("name", f"{run.harness}-{path.name}")
            kept.append(_KeptInfo.model_validate(info).kept())
        except (OSError, ValueError) as problem:
            problems.append(f"{path.name}/{VERSION_FILE}: {_reason(problem)}")
    return kept, problems


class _KeptInfo(pydantic.BaseModel):
    name: str
    version: int
    step: int | None = None
    metrics: dict[str, Any] = {}

    def kept(self) -> KeptVersion:
        return KeptVersion(self.name, self.version, self.step, self.metrics)


class EvalReportError(ValueError):
    """An ``eval.json`` that cannot be read: ``reason`` says why."""


@dataclass(frozen=True, slots=True)
class EvalReport:
    harness: str
    rollouts: int
    tasks: tuple[str, ...]
    checkpoints: tuple[CheckpointReport, ...]


class _ReportFile(pydantic.BaseModel):
    harness: str
    rollouts: int
    tasks: list[str]
    checkpoints: list[CheckpointReport]


def read_eval_report(path: Path) -> EvalReport:
    """The report ``safeagents eval`` wrote; :class:`EvalReportError` naming every problem."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        report = _ReportFile.model_validate(data)
    except (OSError, ValueError) as problem:
        raise EvalReportError(f"{path.name}: {_reason(problem)}") from None
    return EvalReport(
        report.harness, report.rollouts, tuple(report.tasks), tuple(report.checkpoints)
    )


def _reason(problem: Exception) -> str:
    if isinstance(problem, pydantic.ValidationError):
        return "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'the file'}: {error['msg']}"
            for error in problem.errors(include_url=False)
        )
    if isinstance(problem, json.JSONDecodeError):
        return f"not JSON ({problem.msg} at line {problem.lineno} column {problem.colno})"
    if isinstance(problem, OSError):
        return problem.strerror or str(problem)
    return str(problem)
