"""The proxy's dialect edits and session keys, as the exchange takes them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from safeagents._actions import ToolCall
from safeagents.protocols import Dialect, RequestInfo
from safeagents.proxy import _identity, _shapes

__all__ = ["DIALECT_EDITS"]

JSONObject = dict[str, Any]


class _Edits:
    """:class:`safeagents.exchange.DialectEdits` from ``_shapes`` and ``_identity``."""

    def calls_only(self, dialect: Dialect, response: Mapping[str, Any]) -> JSONObject:
        return _shapes.calls_only(dialect, response)

    def rewrite_calls(
        self, dialect: Dialect, response: Mapping[str, Any], replacements: Mapping[str, ToolCall]
    ) -> tuple[JSONObject, dict[str, JSONObject]]:
        return _shapes.rewrite_calls(dialect, response, replacements)

    def restore_calls(
        self,
        dialect: Dialect,
        body: Mapping[str, Any],
        at: int,
        originals: Mapping[str, JSONObject],
    ) -> JSONObject:
        return _shapes.restore_calls(dialect, body, at, originals)

    def conversation(self, dialect: Dialect, body: Mapping[str, Any]) -> list[Any]:
        return _shapes.conversation(dialect, body)

    def history_events(self, dialect: Dialect, item: Any) -> Iterator[ToolCall | str]:
        return _shapes.history_events(dialect, item)

    def root_key(self, dialect: str, body: Mapping[str, Any], info: RequestInfo) -> str:
        return _identity.root_key(dialect, body, info)

    def session_id(
        self, path_id: str | None, headers: Mapping[str, str], conversation_root: str
    ) -> str:
        return _identity.resolve_identity(path_id, headers, conversation_root).id


DIALECT_EDITS = _Edits()
