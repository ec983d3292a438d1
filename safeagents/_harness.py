"""The extension point for harnesses: a tiny base class."""

from __future__ import annotations

import shlex
from collections.abc import Collection
from typing import ClassVar

from safeagents._actions import AnalysisContext, Effect, ToolCall

__all__ = ["Harness", "rejection_script"]


class Harness:
    """Teaches safeagents one agent harness's tools.

    Subclasses set :attr:`name` and :attr:`tools` and implement :meth:`effects`.
    ``effects`` returns ``None`` for a tool it does not know, so the engine can fall
    back to the generic plugin; it returns ``[]`` for a known tool with no effect
    (``todowrite``). It must never raise on malformed arguments.
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[frozenset[str]] = frozenset()
    """Other names users may give with ``--harness`` (``claude`` for ``claude-code``)."""
    tools: ClassVar[frozenset[str]] = frozenset()
    """Tool names this harness offers; used to detect the harness from a request."""
    text_mode: ClassVar[bool] = False
    """It can run actions written in a reply (:meth:`text_calls`): the proxy checks a reply
    without tool calls for them, and takes a request of it offering no tools for its main line."""

    def effects(self, call: ToolCall, ctx: AnalysisContext) -> list[Effect] | None:
        raise NotImplementedError("The 'effects' method must be implemented.")

    def detect(self, tool_names: Collection[str]) -> float:
        """How well ``tool_names`` (a request's tool list) fits this harness, 0..1.

        The score must depend on the set of names only (the registry caches it per set).
        """
        if not self.tools or not tool_names:
            return 0.0
        hits = len(self.tools.intersection(tool_names))
        return hits / max(len(self.tools), len(set(tool_names)))

    def rewrite(
        self, call: ToolCall, message: str, *, offered: Collection[str] = ()
    ) -> ToolCall | None:
        """A call of this harness's own shell tool that shows ``message`` and fails, to stand in
        for the blocked ``call`` (the proxy's ``rewrite`` strategy); ``None`` if there is none.

        ``offered`` is the request's tool list, for harnesses whose shell tool varies. The
        proxy keeps ``call.id`` and puts the original call back in later requests.
        """
        return None

    def text_calls(self, text: str) -> list[ToolCall]:
        """The calls a reply makes in its words, for a harness whose text mode runs actions
        written in the reply (mini-swe-agent's fenced ``bash`` block); ``[]`` by default."""
        return []

    def text_rewrite(self, text: str, message: str) -> str | None:
        """``text``, a reply whose :meth:`text_calls` are blocked, with them replaced by an
        action that shows ``message`` and fails (text mode's :meth:`rewrite`); ``None`` if it
        cannot be (the proxy then re-asks)."""
        return None

    def text_stop(self, message: str) -> str | None:
        """A text-mode reply whose action shows ``message`` and ends the harness's run (the
        proxy's ``stop`` strategy); ``None`` if there is none (the reply is ``message``)."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def rejection_script(message: str) -> str:
    """A shell script that prints ``message`` to stderr and exits 1."""
    return f"printf '%s\\n' {shlex.quote(message)} >&2; exit 1"
