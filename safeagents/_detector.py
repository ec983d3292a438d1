"""The extension point for detectors: checks written in Python that rules call by name."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from safeagents._actions import AnalysisContext, Effect, ToolCall, without_surrogates
from safeagents._session import SessionModel
from safeagents._tool_output import output_text

__all__ = ["CallContext", "Detector", "SessionModel", "SessionState"]


@dataclass(slots=True)
class SessionState:
    """What earlier calls of a session did, for detectors that need history.

    ``check`` and the proxy feed it the same way, in conversation order: user messages with
    :meth:`observe_user`, each tool call through the engine (or :meth:`record_call` for calls
    not checked again) and each tool result with :meth:`observe_output`. ``model`` is what
    the session revealed (see :class:`SessionModel`).
    """

    effects: list[Effect] = field(default_factory=list)
    tool_outputs: list[str] = field(default_factory=list)
    model: SessionModel = field(default_factory=SessionModel)
    said_marks: set[str] = field(default_factory=set)
    """Keys of the ``said_earlier:`` conditions a sentence of an earlier turn met."""
    said_undecided: dict[str, str] = field(default_factory=dict)
    """Keys of the ``said_earlier:`` conditions not yet met whose test of an earlier sentence
    consulted a detector that raised, with that detector's name: rules reading them are
    undecided (fail closed), not answered "not said"."""
    previous_said: tuple[str, ...] = ()
    """The sentences of the last earlier turn that said anything (its content and reasoning)."""

    def observe_user(self, text: str) -> None:
        """A user message (those before the first tool call are the task's instruction)."""
        self.model.observe_user(without_surrogates(text))

    def observe_output(self, text: str) -> None:
        """A tool result, the output of the oldest call still waiting for one (of codex's
        shell-result envelope, the text the command printed: :func:`output_text`)."""
        text = output_text(without_surrogates(text))
        self.tool_outputs.append(text)
        self.model.observe_output(text)

    def record_call(self, effects: Iterable[Effect], *, cwd: str | None = None) -> None:
        """A call's effects, as the engine records them after checking a call."""
        effects = tuple(effects)
        self.model.begin_call(cwd)
        for effect in effects:
            self.model.observe_effect(effect)
        self.effects.extend(effects)

    def fork(self) -> SessionState:
        """A copy to extend privately (the model's copy costs constant time)."""
        return SessionState(
            list(self.effects),
            list(self.tool_outputs),
            self.model.fork(),
            set(self.said_marks),
            dict(self.said_undecided),
            self.previous_said,
        )


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
    said: tuple[str, ...] = ()
    """The sentences of the turn the call belongs to (its content and reasoning)."""


class Detector:
    """A named structural check, used in a rule as ``detector: NAME``.

    ``matches`` must be pure with respect to the effect, bounded in time, and never
    raise. The engine logs an exception and fails closed: a rule whose verdict rested on
    the failed detector gives an ``unanalysable`` finding with the rule's own action.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    def matches(self, effect: Effect, context: CallContext) -> bool:
        raise NotImplementedError("The 'matches' method must be implemented.")
