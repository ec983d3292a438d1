"""Curriculum weights by difficulty, and the rule that held-out tasks are never trained on.

An environment built on Harbor tasks records each task's ``difficulty``, ``held_out`` and
``weight`` in :attr:`Task.data`. Training draws tasks in proportion to their weight: each
task appears ``weight`` times in the order it samples from (a weight of 0 leaves it out), so
the default weights train medium and hard tasks twice as often as easy ones.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from trainer._environment import Task

__all__ = ["DEFAULT_WEIGHTS", "HeldOutError", "curriculum_weights", "refuse_held_out", "weighted"]

DEFAULT_WEIGHTS: Mapping[str, int] = {"easy": 1, "medium": 2, "hard": 2, "unknown": 1}
"""Draws per task of each difficulty: weighted toward medium and hard."""


class HeldOutError(ValueError):
    """Held-out tasks among the tasks to train on."""


def curriculum_weights(weights: Mapping[str, int] | None) -> dict[str, int]:
    """:data:`DEFAULT_WEIGHTS` updated with ``weights``; a :class:`ValueError` for an unknown
    difficulty or a weight that is not a whole number >= 0, or when every weight is 0."""
    merged = dict(DEFAULT_WEIGHTS)
    for difficulty, weight in (weights or {}).items():
        if difficulty not in DEFAULT_WEIGHTS:
            known = ", ".join(DEFAULT_WEIGHTS)
            raise ValueError(f"curriculum: unknown difficulty {difficulty!r}; known: {known}")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            raise ValueError(
                f"curriculum: the weight of {difficulty} must be a whole number >= 0, "
                f"got {weight!r}"
            )
        merged[difficulty] = weight
    if not any(merged.values()):
        raise ValueError("curriculum: every weight is 0, nothing would be trained on")
    return merged


def refuse_held_out(tasks: Sequence[Task]) -> None:
    """:class:`HeldOutError` naming the held-out tasks in ``tasks``, if any."""
    held = [task.id for task in tasks if task.data.get("held_out")]
    if held:
        shown = ", ".join(held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
        raise HeldOutError(
            f"{len(held)} held-out task(s) among the tasks to train on ({shown}): held-out "
            "tasks are for `safeagents eval` only; drop held_out from the environment's options"
        )


def weighted(tasks: Sequence[Task], *, seed: int = 0) -> list[Task]:
    """Each task ``data["weight"]`` times (1 when it has none), shuffled with ``seed``;
    a :class:`ValueError` when every weight is 0."""
    drawn: list[Task] = []
    for task in tasks:
        weight = task.data.get("weight", 1)
        drawn.extend([task] * int(weight))
    if not drawn:
        raise ValueError("every task has weight 0: nothing to train on")
    random.Random(seed).shuffle(drawn)
    return drawn
