"""Serving Responses and Messages harnesses from a Chat Completions upstream.

vLLM returns token ids and logprobs only on Chat Completions, so when the proxy captures
tokens (or the upstream speaks nothing else) a harness's request in another dialect is
translated to Chat Completions, and the answer back: whole answers by :meth:`ChatBridge.response`,
streams by :meth:`ChatBridge.assembler`, so that the harness cannot tell. The translated answer
carries the engine's tokens under ``TOKENS_KEY`` (stripped before the harness sees it).

Item ids of a translated answer derive from the chat completion's id, so a stream and the
answer assembled from it name the same items. Reasoning goes both ways: the engine's
``reasoning`` becomes a Responses ``reasoning`` item or a Messages ``thinking`` block, and the
harness's replayed reasoning goes back into the assistant message's ``reasoning``, so that
multi-turn context keeps it (the chat template decides what it renders).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._base import Dialect, RequestInfo, StreamAssembler
from ._bridge_stream import BridgeAssembler, EventWriter, base_id, reasoning_of
from ._common import JSONObject, as_dict, as_list, loads_json
from ._sampling import THINKING_KWARGS, Sampling
from ._tokens import TOKENS_KEY, chat_request_tokens, envelope_tokens

__all__ = [
    "ChatBridge",
    "ChatCall",
    "ChatTurn",
    "chat_turn",
    "copy_common",
    "function_tool",
    "parsed_arguments",
    "thinking_switch",
]


@dataclass(frozen=True, slots=True)
class ChatCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ChatTurn:
    """The first choice of a chat completion, read loosely."""

    base: str
    """The completion id without its ``chatcmpl-`` prefix: the root of translated ids."""
    model: str
    created: int
    text: str
    reasoning: str
    calls: tuple[ChatCall, ...]
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int


def chat_turn(chat: Mapping[str, Any]) -> ChatTurn:
    choices = as_list(chat.get("choices"))
    choice = as_dict(choices[0]) if choices else {}
    message = as_dict(choice.get("message"))
    calls = []
    for index, raw in enumerate(as_list(message.get("tool_calls"))):
        entry = as_dict(raw)
        function = as_dict(entry.get("function"))
        arguments = function.get("arguments")
        calls.append(
            ChatCall(
                id=str(entry.get("id") or f"call_{base_id(chat.get('id'))}_{index}"),
                name=str(function.get("name") or ""),
                arguments=arguments if isinstance(arguments, str) else "{}",
            )
        )
    usage = as_dict(chat.get("usage"))
    content = message.get("content")
    return ChatTurn(
        base=base_id(chat.get("id")),
        model=str(chat.get("model") or ""),
        created=_count(chat.get("created")),
        text=content if isinstance(content, str) else "",
        reasoning=reasoning_of(message),
        calls=tuple(calls),
        finish_reason=str(choice.get("finish_reason") or "stop"),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def parsed_arguments(arguments: str) -> JSONObject:
    """Tool arguments as an object; text that is not a JSON object gives ``{}``."""
    try:
        value = loads_json(arguments, 64) if arguments.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class ChatBridge(ABC):
    """Requests of ``dialect`` as Chat Completions, and chat answers back in ``dialect``."""

    dialect: Dialect

    def request(
        self, body: Mapping[str, Any], *, sampling: Sampling | None = None, capture: bool = False
    ) -> JSONObject:
        """The chat request for a ``dialect`` request body."""
        chat = self.chat_request(body)
        if sampling is not None:
            chat = sampling.apply_chat(chat)
        if capture:
            chat = chat_request_tokens(chat)
        elif chat.get("stream"):
            chat["stream_options"] = {"include_usage": True}
        return chat

    def response(self, chat: Mapping[str, Any], request: Mapping[str, Any]) -> JSONObject:
        """A whole chat answer in ``dialect``, with the engine's tokens if it sent any."""
        translated = self.from_chat(chat_turn(chat), request)
        try:
            envelope = envelope_tokens(chat)
        except (TypeError, ValueError, OverflowError):  # token fields that are not numbers
            envelope = None
        if envelope is not None:
            translated[TOKENS_KEY] = envelope
        return translated

    def assembler(self, info: RequestInfo, request: Mapping[str, Any]) -> StreamAssembler:
        """Reads the upstream's chat stream; forwards, holds and renders in ``dialect``."""
        inner = self.dialect.assembler(info)
        return BridgeAssembler(
            inner, self.writer(request), lambda chat: self.response(chat, request)
        )

    def error_body(self, status: int, content: bytes) -> JSONObject:
        """An upstream chat error (4xx body) in ``dialect``'s shape, its message kept."""
        try:
            parsed = loads_json(content, 16)
        except ValueError:
            parsed = None
        error = as_dict(as_dict(parsed).get("error"))
        message = str(error.get("message") or content[:300].decode("utf-8", "replace"))
        return self.dialect.error_body(status, message, kind=str(error.get("code") or "upstream"))

    @abstractmethod
    def chat_request(self, body: Mapping[str, Any]) -> JSONObject: ...

    @abstractmethod
    def from_chat(self, turn: ChatTurn, request: Mapping[str, Any]) -> JSONObject: ...

    @abstractmethod
    def writer(self, request: Mapping[str, Any]) -> EventWriter: ...


def copy_common(body: Mapping[str, Any], chat: JSONObject, *, max_tokens_key: str) -> None:
    """Model, stream and sampling fields every dialect shares with chat."""
    chat["model"] = body.get("model")
    if body.get("stream"):
        chat["stream"] = True
    for key in ("temperature", "top_p", "top_k", "user"):
        if key in body and body[key] is not None:
            chat[key] = body[key]
    if isinstance(body.get(max_tokens_key), int):
        chat["max_tokens"] = body[max_tokens_key]


def thinking_switch(chat: JSONObject, on: bool | None) -> None:
    """Pass the harness's own reasoning switch to the chat template (a training session's
    sampling overrides it)."""
    if on is not None:
        kwargs = dict(as_dict(chat.get("chat_template_kwargs")))
        kwargs.update(dict.fromkeys(THINKING_KWARGS, on))
        chat["chat_template_kwargs"] = kwargs


def function_tool(name: str, description: Any, parameters: Any) -> JSONObject:
    schema = parameters if isinstance(parameters, dict) else {"type": "object", "properties": {}}
    function: JSONObject = {"name": name, "parameters": schema}
    if isinstance(description, str) and description:
        function["description"] = description
    return {"type": "function", "function": function}
