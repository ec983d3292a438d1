"""A finished session as the trainer sees it: reward, task, and training rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from safeagents.protocols import Sampling
from safeagents.store import SessionRecord, Store, TurnRecord
from trainer._reward import OutcomeError, RewardFunction, parse_outcome, task_id_of
from trainer._rows import Row, build_rows

__all__ = ["Rollout", "TaskOf", "read_rollout", "rollout_from"]

TaskOf = Callable[[SessionRecord], str | None]


@dataclass(frozen=True, slots=True)
class Rollout:
    """One session's score and rows; an unscored rollout (``reward`` ``None``) has no rows."""

    session_id: str
    harness: str
    task_id: str | None
    reward: float | None
    hacked: bool
    tool_calls: int
    success: bool | None = None
    """What the verifier said (``None`` without a usable outcome)."""
    rows: tuple[Row, ...] = ()
    excluded: Mapping[str, int] = field(default_factory=dict)
    """Turns left out of ``rows``, by reason."""
    forks: int = 0

    @property
    def scored(self) -> bool:
        return self.reward is not None


def _succeeded(session: SessionRecord) -> bool | None:
    if session.outcome is None:
        return None
    try:
        return parse_outcome(session.outcome).succeeded
    except OutcomeError:
        return None


def _rollout(
    session: SessionRecord,
    value: float | None,
    turns: Sequence[TurnRecord],
    task_of: TaskOf,
    sampling: Sampling | None = None,
) -> Rollout:
    task_id = task_of(session)
    rollout = Rollout(
        session_id=session.id,
        harness=session.harness,
        task_id=task_id,
        reward=value,
        hacked=session.hacked,
        tool_calls=session.tool_calls,
        success=_succeeded(session),
    )
    if value is None:
        return rollout
    built = build_rows(turns, task_id=task_id, sampling=sampling)
    return replace(rollout, rows=built.rows, excluded=built.excluded, forks=built.forks)


def rollout_from(
    session: SessionRecord,
    turns: Sequence[TurnRecord],
    reward: RewardFunction,
    *,
    task_of: TaskOf = task_id_of,
    sampling: Sampling | None = None,
) -> Rollout:
    """Score ``session`` with ``reward`` and, when scored, build the rows of its ``turns``
    (with ``sampling``, only of turns the proxy sampled so)."""
    return _rollout(session, reward(session), turns, task_of, sampling)


async def read_rollout(
    store: Store,
    session_id: str,
    reward: RewardFunction,
    *,
    task_of: TaskOf = task_id_of,
    sampling: Sampling | None = None,
) -> Rollout | None:
    """The rollout of a stored session (its turns read only when it is scored), or ``None``
    if the store has no such session."""
    session = await store.get_session(session_id)
    if session is None:
        return None
    value = reward(session)
    turns = await store.turns(session_id) if value is not None else []
    return _rollout(session, value, turns, task_of, sampling)
