"""Where rollouts come from: an environment runs an agent on a task through the proxy and
verifies the result.

The trainer never drives the agent's conversation itself: it hands the environment an
:class:`Endpoint` (the proxy, as one session) and receives the verifier's outcome. What the
model saw and sampled is read back from the proxy's transcript store.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Endpoint", "Environment", "EnvironmentSpecError", "Task", "load_environment"]


@dataclass(frozen=True, slots=True)
class Task:
    """One problem; its rollouts form a GRPO group."""

    id: str
    prompt: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """What one rollout's agent talks to: the proxy, as session ``session_id``.

    ``model`` is the name the harness usually asks for; the proxy's alias for ``harness``
    rewrites it to the adapter version being trained.
    """

    base_url: str
    """OpenAI-style base URL, ending in ``/v1``, with the session id in its path."""
    session_id: str
    harness: str
    model: str
    temperature: float
    max_tokens: int
    api_key: str | None = None
    """The session's key from the proxy (docs/security.md), when the proxy has a token."""
    thinking: bool = True
    """The run's reasoning setting: the harness is configured to match it."""

    @property
    def headers(self) -> dict[str, str]:
        headers = {"x-safeagents-harness": self.harness}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers


@runtime_checkable
class Environment(Protocol):
    """Tasks, and how to run and verify one rollout of a task."""

    harness: str

    def tasks(self) -> Sequence[Task]: ...

    async def rollout(self, task: Task, endpoint: Endpoint) -> Mapping[str, Any]:
        """Run the agent through ``endpoint`` and return the verifier's outcome
        (``{"success": bool, "reward": float}``; see docs/trainer.md).

        A rollout that cannot be scored raises :class:`trainer.RolloutFailure` (``crash``,
        ``timeout`` or ``sandbox``), or says so in the outcome (``"failure"``,
        ``"timed_out": true``, a non-zero ``"harness_exit"``): it is counted, never scored."""
        ...


class EnvironmentSpecError(ValueError):
    """An environment spec that cannot be loaded."""


def load_environment(spec: str, options: Mapping[str, Any] | None = None) -> Environment:
    """Import ``module:attribute`` and call it with ``options`` to get the environment."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise EnvironmentSpecError(f"environment {spec!r} must be written 'module:attribute'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as problem:
        raise EnvironmentSpecError(
            f"environment {spec!r}: cannot import {module_name}: {problem}"
        ) from problem
    factory = getattr(module, attribute, None)
    if factory is None or not callable(factory):
        raise EnvironmentSpecError(
            f"environment {spec!r}: {module_name} has no callable {attribute}"
        )
    environment = factory(**dict(options or {}))
    if not isinstance(environment, Environment):
        raise EnvironmentSpecError(
            f"environment {spec!r} made a {type(environment).__name__}, which lacks "
            "harness, tasks() or rollout()"
        )
    if not environment.tasks():
        raise EnvironmentSpecError(f"environment {spec!r} has no tasks")
    return environment
