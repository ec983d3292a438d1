"""The three wire dialects the proxy serves, as pure functions of bytes and JSON objects.

``dialect_for_path`` picks the dialect for a request path (``dialect_named`` for a recorded
name); each :class:`Dialect` summarises requests, extracts, filters, rewrites and restores tool
calls, builds re-ask requests and splices hidden turns, reads a conversation's history, system
prompt and transcript, renders synthetic answers, errors and SSE streams, and assembles upstream
SSE streams while forwarding their text at once (:class:`StreamAssembler`).
"""

from __future__ import annotations

from ._base import Dialect, RequestInfo, StreamAssembler
from ._bridge import ChatBridge
from ._bridge_messages import MessagesBridge
from ._bridge_responses import ResponsesBridge
from ._chat import ChatCompletions
from ._common import (
    MAX_ANSWER_DEPTH,
    MAX_REQUEST_DEPTH,
    SIBLING_NOTE,
    StreamError,
    loads_json,
    said_text,
)
from ._messages import AnthropicMessages
from ._paths import (
    MODEL_ENDPOINTS,
    PASSTHROUGH_WRITES,
    READ_METHODS,
    UNCHECKED_MODEL_ENDPOINTS,
    canonical_path,
    endpoint_name,
    forwarded_path,
    passes_through,
    split_session,
    unchecked_model_endpoint,
)
from ._requests import RequestError, validate_request
from ._responses import Responses
from ._sampling import Sampling, SamplingError
from ._sse import SSEEvent, SSEParser, encode_event, encode_json, json_bytes, parse_events
from ._tokens import TOKENS_KEY, TokenCapture

__all__ = [
    "CHAT",
    "MAX_ANSWER_DEPTH",
    "MAX_REQUEST_DEPTH",
    "MESSAGES",
    "MODEL_ENDPOINTS",
    "PASSTHROUGH_WRITES",
    "READ_METHODS",
    "RESPONSES",
    "SIBLING_NOTE",
    "TOKENS_KEY",
    "UNCHECKED_MODEL_ENDPOINTS",
    "AnthropicMessages",
    "ChatBridge",
    "ChatCompletions",
    "Dialect",
    "MessagesBridge",
    "RequestError",
    "RequestInfo",
    "Responses",
    "ResponsesBridge",
    "SSEEvent",
    "SSEParser",
    "Sampling",
    "SamplingError",
    "StreamAssembler",
    "StreamError",
    "TokenCapture",
    "canonical_path",
    "chat_bridge",
    "dialect_for_path",
    "dialect_named",
    "encode_event",
    "encode_json",
    "forwarded_path",
    "json_bytes",
    "loads_json",
    "model_path",
    "parse_events",
    "passes_through",
    "said_text",
    "session_prefix",
    "unchecked_model_endpoint",
    "validate_request",
]

CHAT = ChatCompletions()
RESPONSES = Responses()
MESSAGES = AnthropicMessages()

_BRIDGES: dict[str, ChatBridge] = {"responses": ResponsesBridge(), "messages": MessagesBridge()}
_NAMED: dict[str, Dialect] = {dialect.name: dialect for dialect in (CHAT, RESPONSES, MESSAGES)}
_API_PATHS = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "messages": "/v1/messages",
}


def session_prefix(path: str) -> tuple[str | None, str]:
    """Split ``/s/{id}/rest`` into ``(id, "/rest")``; other paths give ``(None, path)``.

    Both are read from the path's canonical spelling (:func:`canonical_path`)."""
    return split_session(canonical_path(path))


def dialect_for_path(path: str) -> Dialect | None:
    """The dialect of a path ending in a model endpoint (``…/chat/completions``,
    ``…/responses``, ``…/messages``), in any spelling and under any prefix."""
    _, rest = session_prefix(path)
    name = endpoint_name(rest)
    return None if name is None else _NAMED[name]


def model_path(dialect: Dialect) -> str:
    """The upstream path of a dialect's endpoint, e.g. ``/v1/chat/completions``."""
    return _API_PATHS[dialect.name]


def dialect_named(name: str) -> Dialect | None:
    """The dialect whose :attr:`Dialect.name` is ``name`` (as recorded turns carry it)."""
    return _NAMED.get(name)


def chat_bridge(dialect: Dialect) -> ChatBridge | None:
    """The translation that serves ``dialect`` from a Chat Completions upstream (``None`` for
    Chat Completions itself)."""
    return _BRIDGES.get(dialect.name)
