"""A chat stream read from the upstream and delivered in the harness's own dialect.

Each upstream chunk feeds two assemblers: a Chat Completions one, which rebuilds the whole
answer (token ids and logprobs included), and the harness dialect's own, which is fed the
events an :class:`~._bridge.EventWriter` makes of the chunk and forwards, holds and renders
them exactly as it would for an upstream speaking that dialect.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from ._base import StreamAssembler
from ._chat_stream import ChatAssembler
from ._common import JSONObject, as_dict, as_list, decode_event
from ._sse import SSEEvent

__all__ = ["BridgeAssembler", "EventWriter", "base_id", "reasoning_of"]


_CHAT_PREFIXES = ("chatcmpl-", "chatcmpl_", "cmpl-")


def base_id(chat_id: Any) -> str:
    text = str(chat_id or "") or "0"
    for prefix in _CHAT_PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix) :] or "0"
    return text


def reasoning_of(message: Mapping[str, Any]) -> str:
    """vLLM names it ``reasoning`` (older servers ``reasoning_content``)."""
    for key in ("reasoning", "reasoning_content"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


class EventWriter(ABC):
    """Turns an upstream chat stream, chunk by chunk, into the events of another dialect
    for what is forwarded at once (the opening, reasoning and text); what follows the first
    tool call is rendered by the dialect's own assembler from the translated answer."""

    def __init__(self) -> None:
        self.base = ""
        self.model = ""
        self.started = False
        self.texted = False
        self.holding = False

    def feed(self, chunk: Mapping[str, Any]) -> bytes:
        out = bytearray()
        if not self.started:
            self.started = True
            self.base = base_id(chunk.get("id"))
            self.model = str(chunk.get("model") or "")
            out += self.open()
        choices = as_list(chunk.get("choices"))
        delta = as_dict(as_dict(choices[0]).get("delta")) if choices else {}
        reasoning = reasoning_of(delta)
        # from a tool call (or reasoning after text) on, the dialect's assembler renders the
        # rest from the whole answer
        self.holding |= bool(as_list(delta.get("tool_calls"))) or bool(reasoning and self.texted)
        if self.holding:
            return bytes(out)
        if reasoning:
            out += self.reasoning(reasoning)
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.texted = True
            out += self.text(content)
        return bytes(out)

    @abstractmethod
    def open(self) -> bytes: ...

    @abstractmethod
    def reasoning(self, piece: str) -> bytes: ...

    @abstractmethod
    def text(self, piece: str) -> bytes: ...


class BridgeAssembler(StreamAssembler):
    def __init__(
        self,
        inner: StreamAssembler,
        writer: EventWriter,
        translate: Callable[[JSONObject], JSONObject],
    ) -> None:
        super().__init__(inner.request)
        self._chat = ChatAssembler()
        self._inner = inner
        self._writer = writer
        self._translate = translate

    def _on_event(self, event: SSEEvent) -> bytes:
        self._chat._on_event(event)
        if event.data.strip() == "[DONE]":
            return b""
        events = self._writer.feed(decode_event(event))
        return self._inner.feed(events) if events else b""

    def held_events(self) -> bytes | None:
        return None  # the upstream's bytes are chat, never the client's

    def _result(self) -> JSONObject:
        return self._translate(self._chat._result())

    def client_view(self, response: Mapping[str, Any]) -> JSONObject:
        return self._inner.client_view(response)

    def tail(self, response: Mapping[str, Any]) -> bytes:
        return self._inner.tail(response)

    def fail(self, status: int, message: str, *, kind: str) -> bytes:
        return self._inner.fail(status, message, kind=kind)
