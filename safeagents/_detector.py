"""The extension point for detectors: checks written in Python that rules call by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from safeagents._actions import AnalysisContext, Effect, ToolCall

__all__ = ["CallContext", "Detector", "SessionState"]


@dataclass(slots=True)
class SessionState:
    """What earlier calls of a session did, for detectors that need history."""

    effects: list[Effect] = field(default_factory=list)
    tool_outputs: list[str] = field(default_factory=list)


def _no_test_paths(path: str) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class CallContext:
    """Everything known about the call an effect came from."""

    call: ToolCall
    harness: str
    analysis: AnalysisContext
    session: SessionState
    effects: tuple[Effect, ...] = ()
    """All effects of this call, for detectors that relate them (env piped to curl)."""
    is_test_path: Callable[[str], bool] = field(default=_no_test_paths)
    """Whether a path is test code: the engine's is the loaded packs' ``test_files`` list."""


class Detector:
    """A named structural check, used in a rule as ``detector: NAME``.

    ``matches`` must be pure with respect to the effect, bounded in time, and never
    raise; the engine treats an exception as "no match" and logs it.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    def matches(self, effect: Effect, context: CallContext) -> bool:
        raise NotImplementedError("The 'matches' method must be implemented.")
