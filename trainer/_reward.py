"""Session rewards: the verifier's outcome, the tool-call bonus, hacks, and the reward hook.

The outcome is the JSON object the verifier posts to the proxy
(``POST /safeagents/v1/sessions/{id}/outcome``). The trainer reads these keys and ignores
any others:

``success`` (bool)
    Whether the task was solved.
``reward`` (number, finite)
    The verifier's score; when absent, ``success`` gives 1.0 or 0.0.
``task_id`` (string or integer)
    The task the session attempted; sessions of one task form a GRPO group.

An outcome with neither ``success`` nor ``reward``, or with a value of the wrong type, is
unusable: the session counts as unscored. A session succeeded if ``success`` is true, or,
without ``success``, if ``reward`` is above 0.

Default reward: 0 for a hacked session; otherwise the verifier's score, plus
``tool_call_bonus × max(0, 1 − tool_calls / tool_call_horizon)`` when the session
succeeded. A session without an outcome has no reward (``None``): it is left out of
training and of its group's baseline, never counted as 0.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pluggy

from safeagents import load_registry
from safeagents.plugins import hookimpl
from safeagents.store import SessionRecord
from trainer.hookspecs import add_hookspecs

__all__ = [
    "DEFAULT_TOOL_CALL_BONUS",
    "DEFAULT_TOOL_CALL_HORIZON",
    "DefaultReward",
    "Outcome",
    "OutcomeError",
    "RewardFunction",
    "default_reward",
    "load_reward",
    "parse_outcome",
    "reward_hook",
    "task_id_of",
]

logger = logging.getLogger("safeagents.trainer")

DEFAULT_TOOL_CALL_BONUS = 0.1
DEFAULT_TOOL_CALL_HORIZON = 15
RewardFunction = Callable[[SessionRecord], float | None]


class OutcomeError(ValueError):
    """An outcome the trainer cannot read (wrong types, or nothing to score)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The parts of a verifier outcome the trainer uses."""

    success: bool | None = None
    reward: float | None = None
    task_id: str | None = None

    @property
    def score(self) -> float:
        """The verifier's score: ``reward``, else 1.0 for success and 0.0 for failure."""
        if self.reward is not None:
            return self.reward
        return 1.0 if self.success else 0.0

    @property
    def succeeded(self) -> bool:
        if self.success is not None:
            return self.success
        return self.reward is not None and self.reward > 0


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_outcome(outcome: Mapping[str, Any]) -> Outcome:
    """The outcome's ``success``, ``reward`` and ``task_id``; :class:`OutcomeError` if unusable."""
    success = outcome.get("success")
    reward = outcome.get("reward")
    task = outcome.get("task_id")
    if success is not None and not isinstance(success, bool):
        raise OutcomeError(f"'success' must be true or false, got {success!r}")
    if reward is not None and not (_is_number(reward) and math.isfinite(reward)):
        raise OutcomeError(f"'reward' must be a finite number, got {reward!r}")
    if task is not None and not (isinstance(task, str) or _is_number(task)):
        raise OutcomeError(f"'task_id' must be a string or an integer, got {task!r}")
    if isinstance(task, float) and not task.is_integer():
        raise OutcomeError(f"'task_id' must be a string or an integer, got {task!r}")
    if success is None and reward is None:
        raise OutcomeError("the outcome has neither 'success' nor 'reward'")
    task_id = None if task is None else str(int(task) if _is_number(task) else task)
    return Outcome(success, None if reward is None else float(reward), task_id)


def task_id_of(session: SessionRecord) -> str | None:
    """The outcome's ``task_id`` (``None`` without an outcome or a readable task)."""
    task = (session.outcome or {}).get("task_id")
    if isinstance(task, str):
        return task or None
    if isinstance(task, bool) or not isinstance(task, int | float):
        return None
    return str(int(task)) if float(task).is_integer() else None


def default_reward(
    session: SessionRecord,
    *,
    tool_call_bonus: float = DEFAULT_TOOL_CALL_BONUS,
    tool_call_horizon: int = DEFAULT_TOOL_CALL_HORIZON,
) -> float | None:
    """The default reward of ``session`` (see the module docstring); ``None`` if unscored."""
    if session.outcome is None:
        return None
    try:
        outcome = parse_outcome(session.outcome)
    except OutcomeError as problem:
        logger.warning("session %s is unscored: %s", session.id, problem)
        return None
    if session.hacked:
        return 0.0
    reward = outcome.score
    if outcome.succeeded:
        reward += tool_call_bonus * max(0.0, 1.0 - session.tool_calls / tool_call_horizon)
    return reward


class DefaultReward:
    """The built-in ``safeagents_reward`` implementation; it runs after every other one."""

    def __init__(
        self,
        tool_call_bonus: float = DEFAULT_TOOL_CALL_BONUS,
        tool_call_horizon: int = DEFAULT_TOOL_CALL_HORIZON,
    ) -> None:
        if tool_call_horizon <= 0:
            raise ValueError("tool_call_horizon must be positive")
        self.tool_call_bonus = tool_call_bonus
        self.tool_call_horizon = tool_call_horizon

    @hookimpl(trylast=True)
    def safeagents_reward(self, session: SessionRecord) -> float | None:
        return default_reward(
            session,
            tool_call_bonus=self.tool_call_bonus,
            tool_call_horizon=self.tool_call_horizon,
        )


def reward_hook(plugins: pluggy.PluginManager) -> RewardFunction:
    """A reward function calling the ``safeagents_reward`` hook of ``plugins``."""
    hook = plugins.hook.safeagents_reward

    def reward(session: SessionRecord) -> float | None:
        value: object = hook(session=session)
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
        raise TypeError(
            f"safeagents_reward returned {value!r} for session {session.id!r}; "
            "expected a finite number or None"
        )

    return reward


def load_reward(
    *,
    tool_call_bonus: float = DEFAULT_TOOL_CALL_BONUS,
    tool_call_horizon: int = DEFAULT_TOOL_CALL_HORIZON,
    entry_points: bool = True,
    plugins: Sequence[object] = (),
) -> RewardFunction:
    """The reward function of the installed plugins, the default coming last.

    Plugins load as for the proxy (built-ins, then the ``safeagents`` entry points, then
    ``plugins``), with :class:`DefaultReward` registered among them.
    """
    default = DefaultReward(tool_call_bonus, tool_call_horizon)
    registry = load_registry(entry_points=entry_points, plugins=[default, *plugins])
    add_hookspecs(registry.plugin_manager)  # the trainer's entry point may not have loaded
    return reward_hook(registry.plugin_manager)
