"""A chat stream read from the upstream and delivered in the harness's own dialect.

Each upstream chunk feeds two assemblers: a Chat Completions one, which rebuilds the whole
answer (token ids and logprobs included), and the harness dialect's own, which is fed the
events an :class:`~._bridge.EventWriter` makes of the chunk and forwards, holds and renders
them exactly as it would for an upstream speaking that dialect.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._base import RequestInfo, StreamAssembler
from ._chat_stream import ChatAssembler
from ._common import JSONObject, decode_event
from ._sse import SSEEvent

if TYPE_CHECKING:
    from ._bridge import ChatBridge

__all__ = ["BridgeAssembler"]


class BridgeAssembler(StreamAssembler):
    def __init__(self, bridge: ChatBridge, request: RequestInfo, body: Mapping[str, Any]) -> None:
        super().__init__(request)
        self._bridge = bridge
        self._body = body
        self._chat = ChatAssembler()
        self._inner = bridge.dialect.assembler(request)
        self._writer = bridge.writer(body)

    def _on_event(self, event: SSEEvent) -> bytes:
        self._chat._on_event(event)
        if event.data.strip() == "[DONE]":
            return b""
        events = self._writer.feed(decode_event(event))
        return self._inner.feed(events) if events else b""

    def held_events(self) -> bytes | None:
        return None  # the upstream's bytes are chat, never the client's

    def _result(self) -> JSONObject:
        return self._bridge.response(self._chat._result(), self._body)

    def client_view(self, response: Mapping[str, Any]) -> JSONObject:
        return self._inner.client_view(response)

    def tail(self, response: Mapping[str, Any]) -> bytes:
        return self._inner.tail(response)

    def fail(self, status: int, message: str, *, kind: str) -> bytes:
        return self._inner.fail(status, message, kind=kind)
