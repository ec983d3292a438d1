"""The contract every wire dialect fulfils, and the request summary the proxy works with."""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._actions import ToolCall
from ._common import JSONObject, StreamError, as_list, said_text
from ._sse import SSEEvent, SSEParser
from ._tokens import TokenCapture

__all__ = ["Dialect", "RequestInfo", "StreamAssembler"]


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What the proxy needs to know about one request body."""

    model: str
    stream: bool
    tool_names: tuple[str, ...]
    message_count: int
    tool_result_count: int
    first_user_text: str
    prefix_keys: tuple[str, ...] = field(repr=False)
    wants_logprobs: bool = False
    wants_token_ids: bool = False
    stream_usage: bool = True

    @property
    def has_tools(self) -> bool:
        return bool(self.tool_names)

    def conversation_key(self, n: int) -> str:
        """Stable hash of the first ``n`` conversation items (0 <= n <= message_count)."""
        if not 0 <= n <= self.message_count:
            raise ValueError(f"conversation has {self.message_count} items, asked for {n}")
        return self.prefix_keys[n]


class StreamAssembler(ABC):
    """Reads an upstream SSE stream: forwards text at once, holds tool calls, rebuilds the response.

    ``feed`` returns the bytes to send to the client now and raises :class:`StreamError` on a
    malformed event; ``finish`` returns the assembled non-stream response; ``tail`` renders
    the rest of the client's stream for a (possibly filtered, or re-asked) response, and
    ``held_events`` gives it as the upstream sent it when the answer goes out unchanged.
    """

    def __init__(self, request: RequestInfo | None = None) -> None:
        self.request = request
        self.holds_text = False
        """Hold the text too, for a harness that runs actions written in it (text mode: only
        Chat Completions has one): nothing is forwarded before the answer is checked."""
        self._parser = SSEParser()
        self._error: StreamError | None = None
        self._held: bytearray | None = bytearray()

    @property
    def keep_logprobs(self) -> bool:
        return self.request is None or self.request.wants_logprobs

    @property
    def keep_token_ids(self) -> bool:
        return self.request is None or self.request.wants_token_ids

    def feed(self, chunk: bytes) -> bytes:
        """Consume upstream bytes; return what may be forwarded to the client now."""
        return self._consume(lambda: self._parser.feed(chunk))

    def finish(self) -> JSONObject:
        """The complete response in non-stream shape; :class:`StreamError` if it is incomplete."""
        self._consume(self._parser.close)
        return self._result()

    def _consume(self, events: Callable[[], list[SSEEvent]]) -> bytes:
        if self._error is not None:
            raise self._error
        forwarded = bytearray()
        try:
            for event in events():
                out = self._on_event(event)
                if out:
                    forwarded += out
                    if self._held is not None and (self._held or out != event.raw):
                        self._held = None  # the client's stream is no longer the upstream's
                elif self._held is not None:
                    self._held += event.raw
        except StreamError as error:
            self._error = error
            raise
        return bytes(forwarded)

    def held_events(self) -> bytes | None:
        """The events not forwarded, byte for byte as the upstream sent them, if forwarding
        them completes the upstream's own stream: every forwarded event went out unchanged
        and none after a held one. For an answer that passes unchanged this replaces
        :meth:`tail` (when the upstream was sent the client's own request)."""
        return None if self._held is None else bytes(self._held)

    @abstractmethod
    def _on_event(self, event: SSEEvent) -> bytes:
        """Absorb one upstream event; return the bytes to forward now."""

    @abstractmethod
    def _result(self) -> JSONObject:
        """The assembled response, or :class:`StreamError` if the stream is incomplete."""

    @abstractmethod
    def client_view(self, response: Mapping[str, Any]) -> JSONObject:
        """The response the client ends up with after the forwarded head plus ``tail(response)``.

        Equal to ``response`` when it extends what was forwarded (the normal case); for a
        different answer (a re-ask) the forwarded text stays and ``response`` follows it.
        """

    @abstractmethod
    def tail(self, response: Mapping[str, Any]) -> bytes:
        """The events that complete the client's stream so that it assembles to
        ``client_view(response)``: held calls still present, finish, usage, terminator."""

    @abstractmethod
    def fail(self, status: int, message: str, *, kind: str) -> bytes:
        """The events that end the client's stream with an error in the API's own shape."""


class Dialect(ABC):
    """One wire protocol: request summaries, tool calls, re-asks, rendering and streaming."""

    name: ClassVar[str]

    @abstractmethod
    def parse_request(self, body: Mapping[str, Any]) -> RequestInfo: ...

    @abstractmethod
    def tool_calls(self, response: Mapping[str, Any]) -> list[ToolCall]: ...

    @abstractmethod
    def without_calls(
        self, response: Mapping[str, Any], blocked_ids: Collection[str]
    ) -> JSONObject:
        """A deep copy without the blocked calls; finish/stop reason consistent with the rest."""

    @abstractmethod
    def hidden_items(
        self, response: Mapping[str, Any], rejections: Mapping[str, str]
    ) -> list[JSONObject]:
        """The assistant turn with all its calls plus one result per call (the hidden pair)."""

    @abstractmethod
    def calls_only(self, response: Mapping[str, Any]) -> JSONObject:
        """A deep copy keeping only the tool calls (text and reasoning dropped)."""

    @abstractmethod
    def rewrite_calls(
        self, response: Mapping[str, Any], replacements: Mapping[str, ToolCall]
    ) -> tuple[JSONObject, dict[str, JSONObject]]:
        """A deep copy with each call named in ``replacements`` (by id) replaced by it, and the
        replaced calls as they were (by id), for :meth:`restore_calls`."""

    conversation_field: ClassVar[str] = "messages"
    """The request body field that holds the conversation."""

    def conversation(self, body: Mapping[str, Any]) -> list[Any]:
        """The conversation items of a request body, as a new list."""
        return list(as_list(body.get(self.conversation_field)))

    def with_conversation(self, body: Mapping[str, Any], items: list[Any]) -> JSONObject:
        """A copy of ``body`` holding ``items`` as its conversation."""
        return {**body, self.conversation_field: items}

    def restore_calls(
        self, body: Mapping[str, Any], at: int, originals: Mapping[str, JSONObject]
    ) -> JSONObject:
        """A copy of ``body`` with the calls :meth:`rewrite_calls` replaced (by id, at or after
        conversation position ``at``) put back as they were."""
        items = self.conversation(body)
        changed = False
        for position in range(max(at, 0), len(items)):
            item = items[position]
            restored = self._restored(item, originals) if isinstance(item, dict) else None
            if restored is not None:
                items[position] = restored
                changed = True
        return self.with_conversation(body, items) if changed else dict(body)

    @abstractmethod
    def _restored(self, item: JSONObject, originals: Mapping[str, JSONObject]) -> JSONObject | None:
        """``item`` with the original calls put back; ``None`` when it holds none of them."""

    @abstractmethod
    def history_events(self, item: Any) -> Iterator[ToolCall | str]:
        """The tool calls (assistant) and tool outputs (results) one conversation item holds."""

    def assistant_text(self, item: Any) -> str:
        """What one conversation item says in the assistant's own words, reasoning then
        content, as the text of a response is read; empty for other items."""
        messages = self.transcript_messages(self.with_conversation({}, [item]))
        return "\n".join(said_text(m) for m in messages if m.get("role") == "assistant").strip()

    @abstractmethod
    def user_text(self, item: Any) -> str | None:
        """The text of a user message item (not tool results it carries); ``None`` when
        ``item`` is not a user message."""

    @abstractmethod
    def system_text(self, body: Mapping[str, Any]) -> str:
        """The system prompt of a request body, in whatever form the dialect carries it."""

    @abstractmethod
    def transcript_messages(self, body: Mapping[str, Any]) -> list[JSONObject]:
        """The conversation of a request body (system prompt included) as OpenAI chat messages."""

    @abstractmethod
    def response_messages(self, response: Mapping[str, Any]) -> list[JSONObject]:
        """The assistant message(s) of a non-stream response as OpenAI chat messages."""

    @abstractmethod
    def response_text(self, response: Mapping[str, Any]) -> str:
        """The assistant text of a non-stream response, parts joined by newlines."""

    def splice(self, body: Mapping[str, Any], at: int, items: list[JSONObject]) -> JSONObject:
        """A copy of ``body`` with ``items`` inserted at conversation position ``at``.

        Untouched conversation items are shared with ``body``; treat both as immutable.
        """
        conversation = self.conversation(body)
        if not 0 <= at <= len(conversation):
            raise ValueError(f"splice position {at} outside 0..{len(conversation)}")
        conversation[at:at] = copy.deepcopy(items)
        return self.with_conversation(body, conversation)

    def with_rejections(
        self,
        body: Mapping[str, Any],
        response: Mapping[str, Any],
        rejections: Mapping[str, str],
    ) -> JSONObject:
        """The request body that asks again after ``response`` had calls rejected."""
        end = self.parse_request(body).message_count
        return self.splice(body, end, self.hidden_items(response, rejections))

    @abstractmethod
    def text_response(self, request: RequestInfo, text: str) -> JSONObject:
        """A complete non-stream response that says ``text`` and ends the turn."""

    @abstractmethod
    def error_body(self, status: int, message: str, *, kind: str) -> JSONObject: ...

    @abstractmethod
    def assembler(self, request: RequestInfo | None = None) -> StreamAssembler:
        """A parser for one upstream stream; with ``request``, the stream is shaped for that
        client (token fields and usage chunks it did not ask for are left out)."""

    def stream_events(
        self, response: Mapping[str, Any], request: RequestInfo | None = None
    ) -> bytes:
        """``response`` rendered as the complete SSE byte stream the API would send."""
        return self.assembler(request).tail(response)

    def request_token_fields(self, body: Mapping[str, Any]) -> JSONObject:
        """``body`` asking the engine for token ids and logprobs (unchanged if it has none)."""
        return dict(body)

    def extract_tokens(self, response: Mapping[str, Any]) -> TokenCapture | None:
        """The engine's token ids and logprobs in ``response``, if it returned them."""
        return None

    def strip_token_fields(
        self, response: Mapping[str, Any], request: RequestInfo | None = None
    ) -> JSONObject:
        """A deep copy without token fields the client (``request``) did not ask for."""
        return copy.deepcopy(dict(response))
