"""Dialect-specific edits and session keys the exchange needs but does not own (yet).

They live in ``safeagents.proxy`` (``_shapes``, ``_identity``) while the dialects are
reworked; the front end hands them in (``safeagents.proxy.DIALECT_EDITS``), so that this
package imports nothing from the front ends. Once the dialects offer them, this goes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from safeagents._actions import ToolCall
from safeagents.protocols import Dialect, RequestInfo

__all__ = ["DialectEdits"]

JSONObject = dict[str, Any]


class DialectEdits(Protocol):
    def calls_only(self, dialect: Dialect, response: Mapping[str, Any]) -> JSONObject:
        """A copy of ``response`` keeping only its tool calls."""
        ...

    def rewrite_calls(
        self, dialect: Dialect, response: Mapping[str, Any], replacements: Mapping[str, ToolCall]
    ) -> tuple[JSONObject, dict[str, JSONObject]]:
        """``response`` with the calls in ``replacements`` replaced; and the originals."""
        ...

    def restore_calls(
        self,
        dialect: Dialect,
        body: Mapping[str, Any],
        at: int,
        originals: Mapping[str, JSONObject],
    ) -> JSONObject:
        """``body`` with rewritten calls put back as they were."""
        ...

    def conversation(self, dialect: Dialect, body: Mapping[str, Any]) -> list[Any]:
        """The conversation items of a request body."""
        ...

    def history_events(self, dialect: Dialect, item: Any) -> Iterator[ToolCall | str]:
        """The tool calls and tool outputs one conversation item holds."""
        ...

    def root_key(self, dialect: str, body: Mapping[str, Any], info: RequestInfo) -> str:
        """A hash of the conversation's root (system prompt and first user message)."""
        ...

    def session_id(
        self, path_id: str | None, headers: Mapping[str, str], conversation_root: str
    ) -> str:
        """The session a request belongs to."""
        ...
