"""Chat Completions streaming: chunk assembly, held tool calls and the rendered tail."""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._base import RequestInfo, StreamAssembler
from ._common import (
    JSONObject,
    StreamError,
    TextBuffer,
    as_dict,
    as_list,
    decode_event,
    split_pieces,
)
from ._errors import openai_error
from ._sse import SSEEvent, encode_json

__all__ = ["ChatAssembler"]

_DONE = b"data: [DONE]\n\n"
_TEXT_FIELDS = ("content", "reasoning_content", "reasoning", "refusal")
_TEXT_NAMES = frozenset(_TEXT_FIELDS)
_ENVELOPE_EXTRAS = ("system_fingerprint", "service_tier")
_TOP_HANDLED = frozenset(
    {"id", "object", "created", "model", "choices", "usage", "prompt_token_ids", "obfuscation"}
)
_CHOICE_HANDLED = frozenset({"index", "delta", "message", "logprobs", "finish_reason", "token_ids"})
_FINISH_FIELDS = frozenset({"finish_reason", "stop_reason"})


@dataclass
class _CallState:
    id: str = ""
    type: str = "function"
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _ChoiceState:
    role: str | None = None
    text: dict[str, list[str]] = field(default_factory=dict)
    calls: dict[int, _CallState] = field(default_factory=dict)
    finish_reason: Any = None
    extras: JSONObject = field(default_factory=dict)
    logprobs: list[Any] | None = None
    token_ids: list[Any] | None = None


@dataclass
class _Sent:
    """What the client already has of one choice."""

    text: defaultdict[str, TextBuffer] = field(default_factory=lambda: defaultdict(TextBuffer))
    logprobs: list[Any] | None = None
    token_ids: list[Any] | None = None


class ChatAssembler(StreamAssembler):
    """Forwards role and text deltas (unless :attr:`holds_text`); holds tool-call deltas,
    finish, usage and ``[DONE]``."""

    def __init__(self, request: RequestInfo | None = None) -> None:
        super().__init__(request)
        self._envelope: JSONObject = {}
        self._top: JSONObject = {}
        self._usage: Any = None
        self._prompt_ids: list[Any] | None = None
        self._choices: dict[int, _ChoiceState] = {}
        self._done = False
        self._sent: dict[int, _Sent] = {}
        self._sent_top: JSONObject = {}
        self._prompt_sent: list[Any] | None = None

    def _on_event(self, event: SSEEvent) -> bytes:
        if not event.data.startswith("{") and event.data.strip() == "[DONE]":
            self._done = True
            return b""
        if self._done:
            return b""
        chunk = decode_event(event)
        if "error" in chunk and not chunk.get("choices"):
            error = chunk["error"]
            message = as_dict(error).get("message") or error
            raise StreamError(f"upstream error in stream: {message}")
        if not self._absorb(chunk) or self.holds_text:
            return b""  # no role and no text (or text held): nothing of it goes out now
        return self._forward(chunk, event.raw)

    def _absorb(self, chunk: JSONObject) -> bool:
        """Take in ``chunk``; whether a choice of it carries a role or text."""
        if len(self._envelope) < 3:
            for key in ("id", "created", "model"):
                if key in chunk and key not in self._envelope:
                    self._envelope[key] = chunk[key]
        if not chunk.keys() <= _TOP_HANDLED:
            for key, value in chunk.items():
                if key not in _TOP_HANDLED and (value is not None or key not in self._top):
                    self._top[key] = value
        if chunk.get("usage") is not None:
            self._usage = chunk["usage"]
        if isinstance(chunk.get("prompt_token_ids"), list):
            self._prompt_ids = list(chunk["prompt_token_ids"])
        forwardable = False
        for raw_choice in as_list(chunk.get("choices")):
            choice = as_dict(raw_choice)
            index = int(choice.get("index") or 0)
            state = self._choices.get(index)
            if state is None:
                state = self._choices[index] = _ChoiceState()
            for name, value in as_dict(choice.get("delta")).items():
                if name in _TEXT_NAMES:
                    if value and isinstance(value, str):
                        state.text.setdefault(name, []).append(value)
                        forwardable = True
                elif name == "role":
                    if isinstance(value, str):
                        state.role = value
                        forwardable = True
                elif name == "tool_calls":
                    for call in as_list(value):
                        _absorb_call(state, as_dict(call))
            if choice.get("finish_reason") is not None:
                state.finish_reason = choice["finish_reason"]
            if isinstance(choice.get("logprobs"), dict):
                state.logprobs = state.logprobs if state.logprobs is not None else []
                state.logprobs.extend(as_list(choice["logprobs"].get("content")))
            if isinstance(choice.get("token_ids"), list):
                state.token_ids = state.token_ids if state.token_ids is not None else []
                state.token_ids.extend(choice["token_ids"])
            if not choice.keys() <= _CHOICE_HANDLED:
                for key, value in choice.items():
                    if key not in _CHOICE_HANDLED and (
                        value is not None or key not in state.extras
                    ):
                        state.extras[key] = value
        return forwardable

    def _forward(self, chunk: JSONObject, raw: bytes) -> bytes:
        choices = [
            forwarded
            for choice in as_list(chunk.get("choices"))
            if (forwarded := self._forward_choice(as_dict(choice))) is not None
        ]
        if not choices:
            return b""
        forwarded_chunk: JSONObject = {}
        for key, value in chunk.items():
            if key == "choices":
                forwarded_chunk[key] = choices
            elif key == "usage":
                forwarded_chunk[key] = None
            elif key != "prompt_token_ids":
                forwarded_chunk[key] = value
                if key not in _TOP_HANDLED:
                    self._sent_top[key] = value
            elif self.keep_token_ids:
                forwarded_chunk[key] = value
                self._prompt_sent = as_list(value)
        return raw if forwarded_chunk == chunk else encode_json(forwarded_chunk)

    def _forward_choice(self, choice: JSONObject) -> JSONObject | None:
        """The text part of one choice delta (recorded as sent), or ``None`` if it has none."""
        delta = as_dict(choice.get("delta"))
        texts = {
            name: text
            for name, text in delta.items()
            if name in _TEXT_NAMES and isinstance(text, str)
        }
        if not isinstance(delta.get("role"), str) and not any(texts.values()):
            return None
        index = int(choice.get("index") or 0)
        sent = self._sent.get(index)
        if sent is None:
            sent = self._sent[index] = _Sent()
        for name, text in texts.items():
            sent.text[name].append(text)
        forwarded: JSONObject = {}
        for key, value in choice.items():
            if key == "delta":
                forwarded[key] = (
                    delta
                    if "tool_calls" not in delta and "function_call" not in delta
                    else {
                        name: item
                        for name, item in delta.items()
                        if name not in ("tool_calls", "function_call")
                    }
                )
            elif key in _FINISH_FIELDS:
                forwarded[key] = None
            elif key == "logprobs":
                forwarded[key] = value if self.keep_logprobs else None
                if self.keep_logprobs and isinstance(value, dict):
                    sent.logprobs = sent.logprobs if sent.logprobs is not None else []
                    sent.logprobs.extend(as_list(value.get("content")))
            elif key != "token_ids":
                forwarded[key] = value
            elif self.keep_token_ids:
                forwarded[key] = value
                sent.token_ids = sent.token_ids if sent.token_ids is not None else []
                sent.token_ids.extend(as_list(value))
        return forwarded

    def _result(self) -> JSONObject:
        if not self._envelope and not self._choices:
            raise StreamError("stream ended before any chunk arrived")
        finished = bool(self._choices) and all(
            state.finish_reason is not None for state in self._choices.values()
        )
        if not (self._done or finished):
            raise StreamError("stream ended before completion (no finish_reason, no [DONE])")
        response: JSONObject = {
            "id": self._envelope.get("id"),
            "object": "chat.completion",
            "created": self._envelope.get("created"),
            "model": self._envelope.get("model"),
            "choices": [
                _choice_result(index, self._choices[index]) for index in sorted(self._choices)
            ],
            **self._top,
        }
        if self._usage is not None:
            response["usage"] = self._usage
        if self._prompt_ids is not None:
            response["prompt_token_ids"] = self._prompt_ids
        return response

    def client_view(self, response: Mapping[str, Any]) -> JSONObject:
        view = copy.deepcopy(dict(response))
        if not self._sent:
            return view
        view.update(self._envelope)
        for key, value in self._sent_top.items():
            view.setdefault(key, value)
        if self._prompt_sent is not None:
            view["prompt_token_ids"] = _prefixed(self._prompt_sent, view.get("prompt_token_ids"))
        for raw_choice in as_list(view.get("choices")):
            choice = as_dict(raw_choice)
            sent = self._sent.get(int(choice.get("index") or 0))
            if sent is None:
                continue
            message = choice.setdefault("message", {})
            for name, buffer in sent.text.items():
                text = buffer.value
                current = message.get(name) if isinstance(message.get(name), str) else ""
                if text and not current.startswith(text):
                    message[name] = f"{text}\n\n{current}" if current else text
            if sent.logprobs is not None:
                entries = as_dict(choice.get("logprobs")).get("content")
                choice["logprobs"] = {"content": _prefixed(sent.logprobs, entries)}
            if sent.token_ids is not None:
                choice["token_ids"] = _prefixed(sent.token_ids, choice.get("token_ids"))
        return view

    def tail(self, response: Mapping[str, Any]) -> bytes:
        view = self.client_view(response)
        envelope: JSONObject = {
            "id": view.get("id"),
            "object": "chat.completion.chunk",
            "created": view.get("created"),
            "model": view.get("model"),
        }
        envelope.update({key: view[key] for key in _ENVELOPE_EXTRAS if key in view})
        chunks: list[JSONObject] = []
        for choice in as_list(view.get("choices")):
            chunks.extend(self._choice_chunks(as_dict(choice)))
        usage = view.get("usage")
        if usage is not None and (self.request is None or self.request.stream_usage):
            chunks.append({"choices": [], "usage": usage})
        if not chunks:
            chunks.append({"choices": []})
        prompt_ids = view.get("prompt_token_ids")
        if self.keep_token_ids and self._prompt_sent is None and isinstance(prompt_ids, list):
            chunks[0]["prompt_token_ids"] = prompt_ids
        skipped = _TOP_HANDLED.union(_ENVELOPE_EXTRAS)
        chunks[-1].update({key: value for key, value in view.items() if key not in skipped})
        return b"".join(encode_json({**envelope, **chunk}) for chunk in chunks) + _DONE

    def _choice_chunks(self, choice: JSONObject) -> list[JSONObject]:
        index = int(choice.get("index") or 0)
        sent = self._sent.get(index, _Sent())
        message = as_dict(choice.get("message"))
        deltas: list[JSONObject] = []
        if index not in self._sent:
            deltas.append({"role": message.get("role") or "assistant", "content": ""})
        for name in _TEXT_FIELDS:
            text = message.get(name)
            done = len(sent.text[name].value) if name in sent.text else 0
            if isinstance(text, str) and len(text) > done:
                deltas.append({name: text[done:]})
        for position, raw_call in enumerate(as_list(message.get("tool_calls"))):
            deltas.extend(_call_deltas(position, as_dict(raw_call)))
        chunks: list[JSONObject] = [
            {"choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": None}]}
            for delta in deltas
        ]
        finish: JSONObject = {
            "index": index,
            "delta": {},
            "logprobs": None,
            "finish_reason": choice.get("finish_reason"),
        }
        finish.update({key: value for key, value in choice.items() if key not in _CHOICE_HANDLED})
        logprobs = choice.get("logprobs")
        if self.keep_logprobs and isinstance(logprobs, dict):
            entries = as_list(logprobs.get("content"))
            finish["logprobs"] = {"content": entries[len(sent.logprobs or []) :]}
        token_ids = choice.get("token_ids")
        if self.keep_token_ids and isinstance(token_ids, list):
            finish["token_ids"] = token_ids[len(sent.token_ids or []) :]
        chunks.append({"choices": [finish]})
        return chunks

    def fail(self, status: int, message: str, *, kind: str) -> bytes:
        return encode_json(openai_error(status, message, kind=kind)) + _DONE


def _prefixed(sent: list[Any], current: Any) -> list[Any]:
    """``current`` if it extends what was sent, else what was sent followed by it."""
    items = as_list(current)
    return items if items[: len(sent)] == sent else [*sent, *items]


def _absorb_call(state: _ChoiceState, call: JSONObject) -> None:
    index = call.get("index")
    if not isinstance(index, int):
        call_id = call.get("id")
        known = {existing.id for existing in state.calls.values()}
        index = (
            len(state.calls) if call_id and call_id not in known else max(state.calls, default=0)
        )
    current = state.calls.get(index)
    if current is None:
        current = state.calls[index] = _CallState()
    if call.get("id"):
        current.id = str(call["id"])
    if call.get("type"):
        current.type = str(call["type"])
    function = as_dict(call.get("function"))
    if function.get("name"):
        current.name = str(function["name"])
    if isinstance(function.get("arguments"), str):
        current.arguments.append(function["arguments"])


def _choice_result(index: int, state: _ChoiceState) -> JSONObject:
    calls = [
        {
            "id": call.id,
            "type": call.type,
            "function": {"name": call.name, "arguments": "".join(call.arguments)},
        }
        for _, call in sorted(state.calls.items())
    ]
    content = "".join(state.text.get("content", []))
    message: JSONObject = {
        "role": state.role or "assistant",
        "content": content if content or not calls else None,
    }
    for name in _TEXT_FIELDS[1:]:
        if text := "".join(state.text.get(name, [])):
            message[name] = text
    if calls:
        message["tool_calls"] = calls
    choice: JSONObject = {
        "index": index,
        "message": message,
        "logprobs": {"content": list(state.logprobs)} if state.logprobs is not None else None,
        "finish_reason": state.finish_reason,
        **state.extras,
    }
    if state.token_ids is not None:
        choice["token_ids"] = list(state.token_ids)
    return choice


def _call_deltas(position: int, call: JSONObject) -> list[JSONObject]:
    """A tool call as a server streams it: id and name first, then argument fragments."""
    function = as_dict(call.get("function"))
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = "" if arguments is None else json.dumps(arguments, ensure_ascii=False)
    head = {
        "index": position,
        "id": call.get("id"),
        "type": call.get("type") or "function",
        "function": {"name": function.get("name"), "arguments": ""},
    }
    pieces = [
        {"index": position, "function": {"arguments": piece}} for piece in split_pieces(arguments)
    ]
    return [{"tool_calls": [item]} for item in (head, *pieces)]
