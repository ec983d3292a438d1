"""The three wire dialects the proxy serves, as pure functions of bytes and JSON objects.

``dialect_for_path`` picks the dialect for a request path (``dialect_named`` for a recorded
name); each :class:`Dialect` summarises requests, extracts, filters, rewrites and restores tool
calls, builds re-ask requests and splices hidden turns, reads a conversation's history, system
prompt and transcript, renders synthetic answers, errors and SSE streams, and assembles upstream
SSE streams while forwarding their text at once (:class:`StreamAssembler`).
"""

from __future__ import annotations

import re

from ._base import Dialect, RequestInfo, StreamAssembler
from ._chat import ChatCompletions
from ._common import SIBLING_NOTE, StreamError
from ._messages import AnthropicMessages
from ._responses import Responses
from ._sse import SSEEvent, SSEParser, encode_event, encode_json, parse_events
from ._tokens import TokenCapture

__all__ = [
    "CHAT",
    "MESSAGES",
    "RESPONSES",
    "SIBLING_NOTE",
    "AnthropicMessages",
    "ChatCompletions",
    "Dialect",
    "RequestInfo",
    "Responses",
    "SSEEvent",
    "SSEParser",
    "StreamAssembler",
    "StreamError",
    "TokenCapture",
    "dialect_for_path",
    "dialect_named",
    "encode_event",
    "encode_json",
    "parse_events",
    "session_prefix",
]

CHAT = ChatCompletions()
RESPONSES = Responses()
MESSAGES = AnthropicMessages()

_NAMED: dict[str, Dialect] = {dialect.name: dialect for dialect in (CHAT, RESPONSES, MESSAGES)}
_ROUTES: dict[str, Dialect] = {
    "/chat/completions": CHAT,
    "/responses": RESPONSES,
    "/messages": MESSAGES,
}
_SESSION_PREFIX = re.compile(r"^/s/([^/]+)(?=/)")


def session_prefix(path: str) -> tuple[str | None, str]:
    """Split ``/s/{id}/rest`` into ``(id, "/rest")``; other paths give ``(None, path)``."""
    match = _SESSION_PREFIX.match(path)
    if match is None:
        return None, path
    return match.group(1), path[match.end() :]


def dialect_for_path(path: str) -> Dialect | None:
    """The dialect serving ``path`` (``/v1`` optional, after an optional ``/s/{id}`` prefix)."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    _, path = session_prefix(path)
    path = path.rstrip("/")
    path = path.removeprefix("/v1") if path.startswith("/v1/") else path
    return _ROUTES.get(path)


def dialect_named(name: str) -> Dialect | None:
    """The dialect whose :attr:`Dialect.name` is ``name`` (as recorded turns carry it)."""
    return _NAMED.get(name)
