"""Responses streaming: typed events, held call items and the rendered tail.

Output items stream one after another. Message and reasoning items before the first call item
are forwarded as they arrive; from the first call item on, everything is held and ``tail``
renders it with contiguous ``output_index`` and ``sequence_number`` values.
"""

from __future__ import annotations

import copy
import time
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
    new_id,
    split_pieces,
)
from ._sse import SSEEvent, encode_json

__all__ = ["ResponsesAssembler"]

_FORWARDABLE_ITEMS = frozenset({"message", "reasoning"})
_OPENING = frozenset({"response.created", "response.in_progress", "response.queued"})
_TERMINAL = {
    "completed": "response.completed",
    "incomplete": "response.incomplete",
    "failed": "response.failed",
}
_STREAMED_FIELDS = {
    "function_call": "function_call_arguments",
    "custom_tool_call": "custom_tool_call_input",
}
_FIELD_OF = {"function_call": "arguments", "custom_tool_call": "input"}
_TRACKED = {
    "response.output_text.delta": ("text", False),
    "response.output_text.done": ("text", True),
    "response.function_call_arguments.delta": ("arguments", False),
    "response.function_call_arguments.done": ("arguments", True),
    "response.custom_tool_call_input.delta": ("input", False),
    "response.custom_tool_call_input.done": ("input", True),
}


@dataclass
class _SentItem:
    """One output item the client has (partly) received."""

    item: JSONObject
    parts: dict[int, JSONObject] = field(default_factory=dict)
    texts: dict[int, TextBuffer] = field(default_factory=dict)
    texts_done: set[int] = field(default_factory=set)
    parts_done: set[int] = field(default_factory=set)
    done: bool = False

    def completed(self) -> JSONObject:
        """The item as the client will hold it once closed with what it was sent."""
        if self.done:
            return copy.deepcopy(self.item)
        item = copy.deepcopy(self.item)
        if "status" in item:
            item["status"] = "completed"
        if item.get("type") == "message":
            item["content"] = [
                {**part, _text_key(part): self.text(index)}
                for index, part in sorted(self.parts.items())
            ]
        return item

    def text(self, index: int) -> str:
        """The text of content part ``index`` sent so far."""
        return self.texts[index].value if index in self.texts else ""


class _Emitter:
    """Numbers events for the client, continuing after what was forwarded."""

    def __init__(self, sequence: int) -> None:
        self.sequence = sequence
        self.out = bytearray()

    def emit(self, kind: str, body: JSONObject) -> None:
        self.out += encode_json({"type": kind, "sequence_number": self.sequence, **body}, kind)
        self.sequence += 1


class ResponsesAssembler(StreamAssembler):
    def __init__(self, request: RequestInfo | None = None) -> None:
        super().__init__(request)
        self._head: JSONObject = {}
        self._final: JSONObject | None = None
        self._items: dict[int, JSONObject] = {}
        self._pieces: dict[tuple[int, str, int], TextBuffer] = {}
        self._opened = False
        self._holding = False
        self._sequence = 0
        self._sent: list[_SentItem] = []
        self._client_index: dict[int, int] = {}

    def _on_event(self, event: SSEEvent) -> bytes:
        payload = decode_event(event)
        kind = str(payload.get("type") or event.event or "")
        if kind == "error":
            code, message = payload.get("code"), payload.get("message")
            raise StreamError(f"upstream error in stream: {code}: {message}")
        if kind in _OPENING:
            self._head = as_dict(payload.get("response")) or self._head
            if self._holding:
                return b""
            self._opened = True
            return self._forward(kind, payload, event.raw)
        if kind in _TERMINAL.values():
            self._final = as_dict(payload.get("response"))
            return b""
        if not isinstance(payload.get("output_index"), int):
            return b""
        index = payload["output_index"]
        self._track(kind, index, payload)
        if not self._opened:
            self._holding = True
        if kind == "response.output_item.added" and not self._holding:
            item = as_dict(payload.get("item"))
            if item.get("type") in _FORWARDABLE_ITEMS:
                self._client_index[index] = len(self._sent)
                self._sent.append(_SentItem(copy.deepcopy(item)))
            else:
                self._holding = True
        if self._holding or index not in self._client_index:
            return b""
        _record_sent(kind, self._sent[self._client_index[index]], payload)
        return self._forward(kind, payload, event.raw)

    def _forward(self, kind: str, payload: JSONObject, raw: bytes) -> bytes:
        forwarded = dict(payload)
        forwarded["sequence_number"] = self._sequence
        self._sequence += 1
        if "output_index" in payload:
            forwarded["output_index"] = self._client_index[payload["output_index"]]
        return raw if forwarded == payload else encode_json(forwarded, kind)

    def _track(self, kind: str, index: int, payload: JSONObject) -> None:
        """Keep a running copy of each item, for servers whose final event omits ``output``."""
        if kind in ("response.output_item.added", "response.output_item.done"):
            self._items[index] = copy.deepcopy(as_dict(payload.get("item")))
            for key in [key for key in self._pieces if key[0] == index]:
                del self._pieces[key]
            return
        part_index = payload.get("content_index") or 0
        if kind == "response.content_part.added":
            item = self._items.setdefault(index, {})
            _part(item, part_index).update(as_dict(payload.get("part")))
        elif kind in _TRACKED:
            name, done = _TRACKED[kind]
            value = payload.get(name if done else "delta")
            if isinstance(value, str):
                key = (index, name, part_index if name == "text" else 0)
                if done or key not in self._pieces:
                    self._pieces[key] = TextBuffer()
                self._pieces[key].append(value)

    def _result(self) -> JSONObject:
        if self._final is None:
            raise StreamError("stream ended before response.completed")
        result = copy.deepcopy(self._final)
        if not as_list(result.get("output")) and self._items:
            items = copy.deepcopy(self._items)
            for (index, name, part_index), buffer in self._pieces.items():
                item = items.setdefault(index, {})
                target = _part(item, part_index) if name == "text" else item
                target[name] = buffer.value
            result["output"] = [items[index] for index in sorted(items)]
        return result

    def client_view(self, response: Mapping[str, Any]) -> JSONObject:
        view = copy.deepcopy(dict(response))
        if not self._opened:
            return view
        view.update(
            {key: self._head[key] for key in ("id", "created_at", "model") if key in self._head}
        )
        output = as_list(view.get("output"))
        extends = len(output) >= len(self._sent) and all(
            _same_item(sent, as_dict(item)) for sent, item in zip(self._sent, output, strict=False)
        )
        if not extends:
            view["output"] = [sent.completed() for sent in self._sent] + output
        return view

    def tail(self, response: Mapping[str, Any]) -> bytes:
        view = self.client_view(response)
        emitter = _Emitter(self._sequence)
        if not self._opened:
            skeleton = {**view, "status": "in_progress", "output": [], "usage": None}
            emitter.emit("response.created", {"response": skeleton})
            emitter.emit("response.in_progress", {"response": skeleton})
        for position, raw_item in enumerate(as_list(view.get("output"))):
            item = as_dict(raw_item)
            if position >= len(self._sent):
                _render_item(emitter, position, item)
            elif not self._sent[position].done:
                _complete_item(emitter, position, item, self._sent[position])
        terminal = _TERMINAL.get(str(view.get("status")), "response.completed")
        emitter.emit(terminal, {"response": view})
        return bytes(emitter.out)

    def fail(self, status: int, message: str, *, kind: str) -> bytes:
        emitter = _Emitter(self._sequence)
        head = self._head or {
            "id": new_id("resp_"),
            "object": "response",
            "created_at": int(time.time()),
            "model": self.request.model if self.request else "",
        }
        failed = {
            **head,
            "status": "failed",
            "error": {"code": kind, "message": message},
            "output": [sent.completed() for sent in self._sent],
            "usage": None,
        }
        if not self._opened:
            emitter.emit("response.created", {"response": {**failed, "status": "in_progress"}})
        emitter.emit("response.failed", {"response": failed})
        return bytes(emitter.out)


def _text_key(part: Mapping[str, Any]) -> str:
    return "refusal" if part.get("type") == "refusal" else "text"


def _part(item: JSONObject, index: int) -> JSONObject:
    content = item.setdefault("content", [])
    while len(content) <= index:
        content.append({"type": "output_text", "text": "", "annotations": []})
    part: JSONObject = content[index]
    return part


def _record_sent(kind: str, sent: _SentItem, payload: JSONObject) -> None:
    index = payload.get("content_index") or 0
    if kind == "response.content_part.added":
        sent.parts[index] = dict(as_dict(payload.get("part")))
    elif kind in ("response.output_text.delta", "response.refusal.delta"):
        sent.texts.setdefault(index, TextBuffer()).append(str(payload.get("delta") or ""))
    elif kind in ("response.output_text.done", "response.refusal.done"):
        sent.texts_done.add(index)
    elif kind == "response.content_part.done":
        sent.parts_done.add(index)
    elif kind == "response.output_item.done":
        sent.done = True
        sent.item = copy.deepcopy(as_dict(payload.get("item")))


def _same_item(sent: _SentItem, item: JSONObject) -> bool:
    """Whether ``item`` is the final form of the item the client was sent."""
    if item.get("type") != sent.item.get("type") or item.get("id") != sent.item.get("id"):
        return False
    content = as_list(item.get("content"))
    return all(
        index < len(content)
        and str(as_dict(content[index]).get(_text_key(as_dict(content[index]))) or "").startswith(
            text
        )
        for index, text in ((index, sent.text(index)) for index in sent.texts)
    )


def _in_progress(item: JSONObject, **changes: Any) -> JSONObject:
    skeleton = {**item, **changes}
    if "status" in item:
        skeleton["status"] = "in_progress"
    return skeleton


def _render_item(emitter: _Emitter, position: int, item: JSONObject) -> None:
    kind = str(item.get("type") or "")
    item_id = item.get("id")
    if kind == "message":
        emitter.emit(
            "response.output_item.added",
            {"output_index": position, "item": _in_progress(item, content=[])},
        )
        for index, part in enumerate(as_list(item.get("content"))):
            _part_events(emitter, item_id, position, index, as_dict(part))
    elif kind in _FIELD_OF:
        name, events = _FIELD_OF[kind], f"response.{_STREAMED_FIELDS[kind]}"
        emitter.emit(
            "response.output_item.added",
            {"output_index": position, "item": _in_progress(item, **{name: ""})},
        )
        value = str(item.get(name) or "")
        where = {"item_id": item_id, "output_index": position}
        for piece in split_pieces(value):
            emitter.emit(f"{events}.delta", {**where, "delta": piece})
        emitter.emit(f"{events}.done", {**where, name: value})
    else:
        emitter.emit(
            "response.output_item.added", {"output_index": position, "item": _in_progress(item)}
        )
    emitter.emit("response.output_item.done", {"output_index": position, "item": item})


def _complete_item(emitter: _Emitter, position: int, item: JSONObject, sent: _SentItem) -> None:
    if item.get("type") == "message":
        for index, part in enumerate(as_list(item.get("content"))):
            if index not in sent.parts_done:
                _part_events(
                    emitter,
                    item.get("id"),
                    position,
                    index,
                    as_dict(part),
                    sent_text=sent.text(index),
                    added=index in sent.parts,
                    text_done=index in sent.texts_done,
                )
    emitter.emit("response.output_item.done", {"output_index": position, "item": item})


def _part_events(
    emitter: _Emitter,
    item_id: Any,
    position: int,
    index: int,
    part: JSONObject,
    *,
    sent_text: str = "",
    added: bool = False,
    text_done: bool = False,
) -> None:
    where = {"item_id": item_id, "output_index": position, "content_index": index}
    key = _text_key(part)
    if not added:
        emitter.emit("response.content_part.added", {**where, "part": {**part, key: ""}})
    if part.get("type") in ("output_text", "refusal") and not text_done:
        events = "response.refusal" if key == "refusal" else "response.output_text"
        extra: JSONObject = {} if key == "refusal" else {"logprobs": []}
        text = str(part.get(key) or "")
        if rest := text[len(sent_text) :] if text.startswith(sent_text) else "":
            emitter.emit(f"{events}.delta", {**where, "delta": rest, **extra})
        emitter.emit(f"{events}.done", {**where, key: text, **extra})
    emitter.emit("response.content_part.done", {**where, "part": part})
