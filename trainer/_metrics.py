"""Per-step training metrics and their JSONL log (one object per line, appended per step).

Floats that are not finite (a diverged ``loss``) are written as ``NaN``/``Infinity``, as
Python's :mod:`json` does, and read back the same way.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields
from pathlib import Path

from trainer._jsonl import JsonlLog

__all__ = [
    "MetricsFile",
    "MetricsLog",
    "MetricsTail",
    "StepMetrics",
    "read_metrics",
    "scan_metrics",
]

logger = logging.getLogger("safeagents.trainer")

_RATES = ("success_rate", "hack_rate", "clip_fraction")
_NON_NEGATIVE = (
    "version",
    "groups",
    "rollouts",
    "samples",
    "unscored",
    "dropped_stale",
    "dropped_oversize",
    "tokens",
    "tokens_per_s",
    "tool_calls_mean",
    "step_seconds",
    "elapsed_seconds",
    "importance_ratio_mean",
    "importance_ratio_min",
    "importance_ratio_max",
    "behaviour_kl",
    "forks",
    "refused_sampling",
    "micro_batches",
    "zero_advantage_groups",
    "staleness_steps_mean",
    "staleness_steps_max",
    "group_timeouts",
)
_LOGGED_PROBLEMS = 10


@dataclass(frozen=True, slots=True)
class StepMetrics:
    """What one optimiser step of one harness's adapter did."""

    step: int
    harness: str
    version: int
    groups: int
    rollouts: int
    samples: int
    unscored: int
    reward_mean: float | None
    success_rate: float | None
    hack_rate: float
    tool_calls_mean: float
    dropped_stale: int
    dropped_oversize: int
    tokens: int
    tokens_per_s: float
    loss: float | None
    step_seconds: float
    elapsed_seconds: float
    published: str | None = None
    importance_ratio_mean: float | None = None
    """``exp(logp - logp_behaviour)`` over the step's trained tokens: 1 at step 0 when
    behaviour and target sampling match."""
    importance_ratio_min: float | None = None
    importance_ratio_max: float | None = None
    clip_fraction: float | None = None
    """Trained tokens inside TRL's clip region (``clip_ratio/region_mean``)."""
    behaviour_kl: float | None = None
    """KL(behaviour ‖ trained policy) per trained token (k3 estimate): ≈ 0 at step 1."""
    forks: int | None = None
    """Rows started where a session's token prefix broke (dropped reasoning, compaction)."""
    refused_sampling: int | None = None
    """Turns left out because they were not sampled with the run's sampling parameters."""
    micro_batches: int = 0
    zero_advantage_groups: int = 0
    """Groups whose scored rollouts all scored alike (or fewer than two scored): no gradient."""
    staleness_steps_mean: float = 0.0
    """Optimiser steps between the weights that sampled a trained row and the ones trained."""
    staleness_steps_max: int = 0
    group_timeouts: int = 0
    """Groups released on their time-out, without their stragglers."""

    def __post_init__(self) -> None:
        problems: list[str] = []
        if self.step < 1:
            problems.append(f"step is 1-based, got {self.step}")
        if not self.harness:
            problems.append("harness is empty")
        for name in _NON_NEGATIVE:
            value = getattr(self, name)
            if value is not None and not value >= 0:
                problems.append(f"{name} must be >= 0, got {value}")
        for name in _RATES:
            value = getattr(self, name)
            if value is not None and not 0.0 <= value <= 1.0:
                problems.append(f"{name} must be within [0, 1], got {value}")
        if problems:
            raise ValueError("; ".join(problems))

    def to_json(self) -> dict[str, object]:
        """A JSON object of plain ``int``/``float``/``str``/``None`` values, in field order."""
        return {field.name: _PLAIN[field.type](getattr(self, field.name)) for field in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> StepMetrics:
        """Read :meth:`to_json`'s object; ignores unknown keys, raises ``ValueError`` listing
        every missing or mistyped one."""
        values: dict[str, object] = {}
        problems: list[str] = []
        for field in fields(cls):
            if field.name not in data:
                if field.default is MISSING:
                    problems.append(f"missing {field.name!r}")
                else:
                    values[field.name] = field.default
                continue
            try:
                values[field.name] = _PARSE[field.type](data[field.name])
            except TypeError as error:
                problems.append(f"{field.name!r} {error}")
        if problems:
            raise ValueError("; ".join(problems))
        return cls(**values)  # type: ignore[arg-type]


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"must be an integer, got {value!r}")
    return value


def _float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"must be a number, got {value!r}")
    return float(value)


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"must be a string, got {value!r}")
    return value


def _optional(parse: Callable[[object], object]) -> Callable[[object], object]:
    return lambda value: None if value is None else parse(value)


def _plain_int(value: object) -> object:
    return int(value)  # type: ignore[call-overload]


def _plain_float(value: object) -> object:
    return float(value)  # type: ignore[arg-type]


# Keyed by the annotation strings of StepMetrics' fields (``from __future__ import annotations``).
_PARSE: dict[object, Callable[[object], object]] = {
    "int": _int,
    "float": _float,
    "str": _str,
    "float | None": _optional(_float),
    "int | None": _optional(_int),
    "str | None": _optional(_str),
}
# numpy/torch scalars (``loss.item()`` forgotten) become plain numbers json can write.
_PLAIN: dict[object, Callable[[object], object]] = {
    "int": _plain_int,
    "float": _plain_float,
    "str": str,
    "float | None": _optional(_plain_float),
    "int | None": _optional(_plain_int),
    "str | None": _optional(str),
}


class MetricsLog(JsonlLog):
    """An append-only JSONL file of :class:`StepMetrics`, flushed after every step."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "metrics log")

    def append(self, metrics: StepMetrics) -> None:
        """Write one step as one line and flush it."""
        self.write(metrics.to_json())


@dataclass(frozen=True, slots=True)
class MetricsFile:
    """The steps read from a metrics log, and a ``file:line: reason`` for each line skipped."""

    metrics: tuple[StepMetrics, ...]
    skipped: tuple[str, ...]


def scan_metrics(path: Path) -> MetricsFile:
    """Read every well-formed line of ``path``; blank lines are ignored, bad ones reported."""
    metrics: list[StepMetrics] = []
    skipped: list[str] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                metrics.append(_parse_line(line))
            except ValueError as error:
                skipped.append(f"{path}:{number}: {error}")
    return MetricsFile(tuple(metrics), tuple(skipped))


class MetricsTail:
    """Reads a metrics log as it grows: each :meth:`read` returns the complete lines written
    since the last one. A last line without its newline (a step being written, or a run
    killed mid-write) is left for later, never reported as malformed."""

    def __init__(self, path: Path, *, offset: int = 0, line: int = 0) -> None:
        if offset < 0 or line < 0:
            raise ValueError(f"offset and line must be >= 0, got {offset} and {line}")
        self.path = path
        self.offset = offset
        """Bytes read: the start of the next line."""
        self.line = line
        """Lines read (blank and malformed ones included)."""

    def shrunk(self) -> bool:
        """Whether the file is now shorter than what was read (replaced or truncated)."""
        try:
            return self.path.stat().st_size < self.offset
        except FileNotFoundError:
            return self.offset > 0

    def read(self) -> MetricsFile:
        """The steps of the complete lines after :attr:`offset`, and a ``file:line: reason``
        for each malformed one; nothing when the file does not exist (yet)."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except FileNotFoundError:
            return MetricsFile((), ())
        complete = data[: data.rfind(b"\n") + 1]
        metrics: list[StepMetrics] = []
        skipped: list[str] = []
        for raw in complete.split(b"\n")[:-1]:
            self.line += 1
            text = raw.decode("utf-8", errors="replace")
            if not text.strip():
                continue
            try:
                metrics.append(_parse_line(text))
            except ValueError as error:
                skipped.append(f"{self.path}:{self.line}: {error}")
        self.offset += len(complete)
        return MetricsFile(tuple(metrics), tuple(skipped))


def _parse_line(line: str) -> StepMetrics:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    return StepMetrics.from_json(data)


def read_metrics(path: Path) -> list[StepMetrics]:
    """The steps in ``path``; malformed lines are skipped and logged on ``safeagents.trainer``."""
    read = scan_metrics(path)
    for problem in read.skipped[:_LOGGED_PROBLEMS]:
        logger.warning("skipped a metrics line: %s", problem)
    if read.skipped:
        logger.warning("skipped %d malformed line(s) in %s", len(read.skipped), path)
    return list(read.metrics)
