"""Adapter versions, the staleness filter, and token-budget micro-batches.

Each harness has its own adapter, served as ``{harness}-v{k}``; a served name without a
version is the base model, version 0. A row holds turns of possibly several versions and
is as old as the oldest of them. Staleness and packing apply to the samples of one adapter
(one harness) at a time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from trainer._advantages import Group, Sample, group_samples
from trainer._rows import Row

__all__ = [
    "BASE_VERSION",
    "DEFAULT_MAX_STALENESS",
    "DEFAULT_TOKEN_BUDGET",
    "Filtered",
    "MicroBatch",
    "PackedBatch",
    "Packing",
    "Staleness",
    "StalenessUnit",
    "adapter_name",
    "drop_stale",
    "learning_samples",
    "pack_micro_batches",
    "parse_version",
    "row_version",
]

DEFAULT_TOKEN_BUDGET = 65_536
DEFAULT_MAX_STALENESS = 4
DEFAULT_PUBLISH_EVERY = 10
BASE_VERSION = 0
_VERSIONED = re.compile(r"(?P<harness>.+)-v(?P<version>0|[1-9][0-9]*)")


def adapter_name(harness: str, version: int) -> str:
    """The served name of ``harness``'s adapter version ``version`` (``{harness}-v{k}``)."""
    if version < 0:
        raise ValueError(f"adapter versions are >= 0, got {version}")
    return f"{harness}-v{version}"


def parse_version(model: str, harness: str | None = None) -> int | None:
    """``k`` of a served name ``{harness}-v{k}`` (of that ``harness`` if given), else ``None``."""
    match = _VERSIONED.fullmatch(model)
    if match is None or (harness is not None and match["harness"] != harness):
        return None
    return int(match["version"])


def row_version(row: Row) -> int:
    """The oldest adapter version ``row`` was sampled from (``BASE_VERSION`` for the base)."""
    versions = [parse_version(model, row.harness) for model in row.models]
    return min((BASE_VERSION if v is None else v for v in versions), default=BASE_VERSION)


StalenessUnit = Literal["versions", "steps"]


@dataclass(frozen=True, slots=True)
class Staleness:
    """How far behind the policy being trained a sample may be, and in which unit.

    A version is published every ``publish_every`` optimiser steps; version ``k`` holds the
    weights of step ``(k - first_trained) * publish_every`` (the CPU path publishes v1 after
    the first ``publish_every`` steps, ``first_trained`` 0; TRL's async path publishes the
    untrained adapter as v1, ``first_trained`` 1). A sample is ``steps_behind`` the step
    being taken by the steps between those weights and the current ones. With ``unit``
    ``versions`` a sample more than ``limit`` versions behind is dropped; with ``steps``,
    one more than ``limit`` optimiser steps behind.
    """

    limit: int = DEFAULT_MAX_STALENESS
    unit: StalenessUnit = "versions"
    publish_every: int = DEFAULT_PUBLISH_EVERY
    first_trained: int = 0

    def __post_init__(self) -> None:
        if self.limit < 0:
            raise ValueError(f"max_staleness must be >= 0, got {self.limit}")
        if self.publish_every <= 0:
            raise ValueError(f"publish_every must be positive, got {self.publish_every}")

    def version_step(self, version: int) -> int:
        """The optimiser step whose weights ``version`` serves (0 for the base)."""
        return max(0, (version - self.first_trained) * self.publish_every)

    def steps_behind(self, version: int, step: int) -> int:
        return max(0, step - self.version_step(version))

    def stale(self, version: int, *, current_version: int, step: int) -> bool:
        if self.unit == "steps":
            return self.steps_behind(version, step) > self.limit
        return current_version - version > self.limit

    @property
    def versions_kept(self) -> int:
        """Versions behind the current one a fresh sample can come from (the serving window)."""
        if self.unit == "steps":
            return -(-self.limit // self.publish_every)
        return self.limit


@dataclass(frozen=True, slots=True)
class Filtered:
    """Samples kept by a filter, how many it dropped, and how many optimiser steps behind
    each kept sample is (in ``kept``'s order)."""

    kept: tuple[Sample, ...]
    dropped: int
    steps_behind: tuple[int, ...] = ()


def drop_stale(
    samples: Iterable[Sample],
    current_version: int,
    max_staleness: int | Staleness = DEFAULT_MAX_STALENESS,
    *,
    step: int = 0,
    version_of: Callable[[Row], int] = row_version,
) -> Filtered:
    """Drop samples too far behind ``current_version`` at optimiser ``step`` (an ``int``
    ``max_staleness`` counts versions)."""
    staleness = max_staleness if isinstance(max_staleness, Staleness) else Staleness(max_staleness)
    kept: list[Sample] = []
    behind: list[int] = []
    dropped = 0
    for sample in samples:
        version = version_of(sample.row)
        if staleness.stale(version, current_version=current_version, step=step):
            dropped += 1
        else:
            kept.append(sample)
            behind.append(staleness.steps_behind(version, step))
    return Filtered(tuple(kept), dropped, tuple(behind))


def learning_samples(
    group: Group,
    *,
    current_version: int,
    max_staleness: int | Staleness = DEFAULT_MAX_STALENESS,
    step: int = 0,
    scale_std: bool = False,
    version_of: Callable[[Row], int] = row_version,
) -> Filtered:
    """The samples of ``group`` a step learns from, on both training paths: group-relative
    advantages, zero-advantage samples (no gradient) left out, then stale ones dropped."""
    carrying = [s for s in group_samples(group, scale_std=scale_std) if s.advantage != 0.0]
    return drop_stale(carrying, current_version, max_staleness, step=step, version_of=version_of)


@dataclass(frozen=True, slots=True)
class PackedBatch:
    """A micro-batch laid out flat, padding-free: sequences back to back.

    ``position_ids`` restart at 0 for each sequence; ``advantages`` repeat each sequence's
    advantage on its trained tokens and are 0 elsewhere; ``seq_lengths`` give the cut points.
    """

    input_ids: list[int]
    position_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float]
    advantages: list[float]
    seq_lengths: list[int]


@dataclass(frozen=True, slots=True)
class MicroBatch:
    """Samples trained in one forward/backward pass, within the token budget."""

    samples: tuple[Sample, ...]

    @property
    def num_tokens(self) -> int:
        return sum(sample.row.num_tokens for sample in self.samples)

    @property
    def num_trained(self) -> int:
        return sum(sample.row.num_trained for sample in self.samples)

    def flat(self) -> PackedBatch:
        packed = PackedBatch([], [], [], [], [], [])
        for sample in self.samples:
            row = sample.row
            packed.input_ids.extend(row.input_ids)
            packed.position_ids.extend(range(row.num_tokens))
            packed.loss_mask.extend(row.loss_mask)
            packed.logprobs.extend(row.logprobs)
            packed.advantages.extend(sample.advantage * mask for mask in row.loss_mask)
            packed.seq_lengths.append(row.num_tokens)
        return packed


@dataclass(frozen=True, slots=True)
class Packing:
    """Micro-batches and the samples left out because they alone exceed the budget."""

    batches: tuple[MicroBatch, ...]
    dropped_oversize: int


def pack_micro_batches(
    samples: Sequence[Sample], token_budget: int = DEFAULT_TOKEN_BUDGET
) -> Packing:
    """Pack ``samples`` (one harness's) into few micro-batches of at most ``token_budget``.

    First-fit decreasing: longest sample first, each into the first batch it fits in. A
    sample longer than the budget is dropped and counted.
    """
    if token_budget <= 0:
        raise ValueError(f"token_budget must be positive, got {token_budget}")
    harnesses = {sample.row.harness for sample in samples}
    if len(harnesses) > 1:
        raise ValueError(f"samples of several adapters given: {sorted(harnesses)}")
    fitting = [sample for sample in samples if sample.row.num_tokens <= token_budget]
    ordered = sorted(fitting, key=lambda sample: -sample.row.num_tokens)
    bins: list[list[Sample]] = []
    room: list[int] = []
    for sample in ordered:
        size = sample.row.num_tokens
        for index, free in enumerate(room):
            if size <= free:
                bins[index].append(sample)
                room[index] -= size
                break
        else:
            bins.append([sample])
            room.append(token_budget - size)
    batches = tuple(MicroBatch(tuple(members)) for members in bins)
    return Packing(batches, len(samples) - len(fitting))
