"""What earlier calls of a session did, for detectors: rebuilt from the conversation, cached."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import SessionState
from safeagents._harness import Harness
from safeagents._registry import Registry
from safeagents.exchange._text_mode import action_calls
from safeagents.protocols import Dialect, RequestInfo

__all__ = ["HistoryCache"]


@dataclass(slots=True)
class _Entry:
    count: int = 0
    key: str = ""
    state: SessionState = field(default_factory=SessionState)
    acted: bool = False
    """The last item was a text-mode action: a user message next is its output."""


class HistoryCache:
    """Per-session :class:`SessionState`, extended incrementally while a conversation grows,
    fed as ``check`` feeds it (user messages, each call's effects, each tool result, and,
    through ``said``, what the assistant said in its own words). With a text-mode harness, an
    assistant message without tool calls makes the calls its words hold, and the user message
    after such a message is their output.

    A request that does not extend the cached conversation (another worker or instance
    served the last one, a restart, a side conversation, compaction) rebuilds the state from
    its own items: the conversation is the session's history, so any process can.
    """

    def __init__(
        self,
        registry: Registry,
        size: int = 256,
        *,
        effects: Callable[[ToolCall, str, AnalysisContext], list[Effect]] | None = None,
        said: Callable[[str, str, AnalysisContext, SessionState], None] | None = None,
    ) -> None:
        self._registry = registry
        self._size = size
        self._effects = effects if effects is not None else registry.effects
        self._said = said
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()

    def state(
        self,
        slot: tuple[str, str],
        dialect: Dialect,
        body: dict[str, Any],
        info: RequestInfo,
        harness: str,
        context: AnalysisContext,
        text_mode: Harness | None = None,
    ) -> SessionState:
        """The state after the conversation of ``body``; a private copy the engine may extend."""
        entry = self._current(slot, info)
        items = dialect.conversation(body)
        state = entry.state
        for position in range(entry.count, info.message_count):
            item = items[position]
            if self._said is not None and (text := dialect.assistant_text(item)):
                self._said(text, harness, context, state)
            calls = False
            for event in dialect.history_events(item):
                if isinstance(event, ToolCall):
                    state.record_call(self._effects(event, harness, context), cwd=context.cwd)
                    calls = True
                else:
                    state.observe_output(event)
                    entry.acted = False
            asked = dialect.user_text(item)
            if asked is not None and entry.acted:
                state.observe_output(asked)
                entry.acted = False
            elif asked is not None:
                state.observe_user(asked)
            if text_mode is not None and not calls:
                actions = action_calls(dialect, item, text_mode, position)
                for call in actions:
                    state.record_call(self._effects(call, harness, context), cwd=context.cwd)
                entry.acted = entry.acted or bool(actions)
        entry.count = info.message_count
        entry.key = info.conversation_key(info.message_count)
        self._entries[slot] = entry
        self._entries.move_to_end(slot)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return state.fork()

    def unseen_calls(
        self,
        slot: tuple[str, str],
        dialect: Dialect,
        body: dict[str, Any],
        info: RequestInfo,
        text_mode: Harness | None = None,
    ) -> list[ToolCall]:
        """The calls of ``body``'s conversation that :meth:`state` has yet to take in (all of
        them when this process has not followed the conversation: another instance served
        its last turns, a restart)."""
        start = self._current(slot, info).count
        items = dialect.conversation(body)
        found: list[ToolCall] = []
        for position in range(start, info.message_count):
            calls = [e for e in dialect.history_events(items[position]) if isinstance(e, ToolCall)]
            found += calls or action_calls(dialect, items[position], text_mode, position)
        return found

    def _current(self, slot: tuple[str, str], info: RequestInfo) -> _Entry:
        """The cached entry when the conversation extends it, else a new one."""
        entry = self._entries.get(slot)
        if (
            entry is None
            or entry.count > info.message_count
            or info.conversation_key(entry.count) != entry.key
        ):
            return _Entry()
        return entry
