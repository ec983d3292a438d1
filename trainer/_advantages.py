"""Group-relative advantages: rollouts of one task form a group, centred on its mean reward.

Unscored rollouts (reward ``None``) stay members of their group but are left out of its
baseline and produce no samples. A hacked rollout scores 0 and counts like any other. A
group with fewer than two scored members has no baseline to compare against and yields
nothing. Every row of a rollout carries that rollout's advantage.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from trainer._rollouts import Rollout
from trainer._rows import Row

__all__ = [
    "DEFAULT_GROUP_SIZE",
    "Group",
    "GroupCollector",
    "Sample",
    "group_advantages",
    "group_samples",
    "zero_advantage",
]

DEFAULT_GROUP_SIZE = 8
STD_EPSILON = 1e-4
MIN_SCORED = 2


@dataclass(frozen=True, slots=True)
class Sample:
    """A row with the advantage and reward of the rollout it came from."""

    row: Row
    advantage: float
    reward: float


@dataclass(frozen=True, slots=True)
class Group:
    """The rollouts of one task that are compared with each other."""

    task_id: str
    rollouts: tuple[Rollout, ...]

    @property
    def scored(self) -> int:
        return sum(rollout.scored for rollout in self.rollouts)


def group_advantages(
    rewards: Sequence[float | None], *, scale_std: bool = False
) -> list[float | None]:
    """Each reward minus the mean of the scored ones (``None`` stays ``None``).

    With ``scale_std`` the differences are divided by the scored rewards' sample standard
    deviation (plus a small epsilon, as TRL does). Fewer than two scored rewards: all ``None``.
    """
    scored = [reward for reward in rewards if reward is not None]
    if len(scored) < MIN_SCORED:
        return [None] * len(rewards)
    mean = math.fsum(scored) / len(scored)
    scale = 1.0
    if scale_std:
        variance = math.fsum((reward - mean) ** 2 for reward in scored) / (len(scored) - 1)
        scale = math.sqrt(variance) + STD_EPSILON
    return [None if reward is None else (reward - mean) / scale for reward in rewards]


def group_samples(group: Group, *, scale_std: bool = False) -> list[Sample]:
    """The samples of every scored rollout in ``group`` (none if under two are scored)."""
    advantages = group_advantages([r.reward for r in group.rollouts], scale_std=scale_std)
    samples: list[Sample] = []
    for rollout, advantage in zip(group.rollouts, advantages, strict=True):
        if advantage is None or rollout.reward is None:
            continue
        samples.extend(Sample(row, advantage, rollout.reward) for row in rollout.rows)
    return samples


def zero_advantage(group: Group) -> bool:
    """Whether ``group`` teaches nothing: fewer than two scored rollouts, or all scored alike
    (every rollout failed, or every one succeeded)."""
    advantages = group_advantages([r.reward for r in group.rollouts])
    return all(advantage is None or advantage == 0.0 for advantage in advantages)


class GroupCollector:
    """Gathers finished rollouts per task and releases each group once it is full.

    Whoever launched the rollouts knows when a group will not fill (a rollout that never
    got an outcome) and releases it with :meth:`flush`.
    """

    def __init__(self, group_size: int = DEFAULT_GROUP_SIZE) -> None:
        if group_size < MIN_SCORED:
            raise ValueError(f"group_size must be at least {MIN_SCORED}, got {group_size}")
        self.group_size = group_size
        self.ungrouped = 0
        """Rollouts dropped because they name no task."""
        self._pending: dict[str, list[Rollout]] = {}

    @property
    def pending(self) -> Mapping[str, int]:
        """Rollouts waiting, per task."""
        return {task: len(rollouts) for task, rollouts in self._pending.items()}

    def add(self, rollout: Rollout) -> Group | None:
        """Add ``rollout``; the group of its task when this completes it."""
        if rollout.task_id is None:
            self.ungrouped += 1
            return None
        members = self._pending.setdefault(rollout.task_id, [])
        members.append(rollout)
        if len(members) < self.group_size:
            return None
        del self._pending[rollout.task_id]
        return Group(rollout.task_id, tuple(members))

    def flush(self, task_id: str | None = None) -> list[Group]:
        """Release the incomplete group of ``task_id`` (of every task when ``None``)."""
        tasks = list(self._pending) if task_id is None else [task_id]
        groups: list[Group] = []
        for task in tasks:
            members = self._pending.pop(task, None)
            if members:
                groups.append(Group(task, tuple(members)))
        return groups
