"""Anthropic Messages streaming: content blocks, held ``tool_use`` blocks and the rendered tail.

Text and thinking blocks before the first ``tool_use`` block are forwarded as they arrive; from
the first ``tool_use`` block on everything is held, and ``tail`` renders it with block indices
continuing after the blocks already sent.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._base import RequestInfo, StreamAssembler
from ._common import (
    MAX_ANSWER_DEPTH,
    JSONObject,
    StreamError,
    TextBuffer,
    as_dict,
    as_list,
    decode_event,
    loads_json,
    split_pieces,
)
from ._errors import anthropic_error
from ._sse import SSEEvent, encode_json

__all__ = ["MessagesAssembler"]

_FORWARDABLE_BLOCKS = frozenset({"text", "thinking", "redacted_thinking"})
_TEXT_KEYS = {"text": "text", "thinking": "thinking"}
_DELTA_KEYS = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature"}


@dataclass
class _SentBlock:
    """One content block the client has (partly) received."""

    block: JSONObject
    buffer: TextBuffer = field(default_factory=TextBuffer)
    signature: str = ""
    stopped: bool = False

    def completed(self) -> JSONObject:
        block = copy.deepcopy(self.block)
        if (key := _TEXT_KEYS.get(str(block.get("type")))) is not None:
            block[key] = self.buffer.value
        if self.signature:
            block["signature"] = self.signature
        return block

    def extended_by(self, block: JSONObject) -> bool:
        """Whether ``block`` is the final form of this block."""
        kind = self.block.get("type")
        if block.get("type") != kind:
            return False
        if (key := _TEXT_KEYS.get(str(kind))) is not None:
            return str(block.get(key) or "").startswith(self.buffer.value)
        return block == self.block


class MessagesAssembler(StreamAssembler):
    def __init__(self, request: RequestInfo | None = None) -> None:
        super().__init__(request)
        self._message: JSONObject | None = None
        self._blocks: dict[int, JSONObject] = {}
        self._json: dict[int, list[str]] = {}
        self._texts: dict[tuple[int, str], TextBuffer] = {}
        self._delta: JSONObject = {}
        self._usage: JSONObject = {}
        self._stopped = False
        self._holding = False
        self._sent: list[_SentBlock] = []
        self._client_index: dict[int, int] = {}

    def _on_event(self, event: SSEEvent) -> bytes:
        payload = decode_event(event)
        kind = str(payload.get("type") or event.event or "")
        if kind == "error":
            error = as_dict(payload.get("error"))
            raise StreamError(
                f"upstream error in stream: {error.get('type')}: {error.get('message')}"
            )
        if kind == "ping":
            return event.raw
        if kind == "message_start":
            self._message = copy.deepcopy(as_dict(payload.get("message")))
            self._usage.update(as_dict(self._message.get("usage")))
            return event.raw
        if kind == "message_delta":
            self._delta.update(as_dict(payload.get("delta")))
            self._usage.update(as_dict(payload.get("usage")))
            return b""
        if kind == "message_stop":
            self._stopped = True
            return b""
        index = payload.get("index")
        if not isinstance(index, int):
            return b""
        if kind == "content_block_start":
            block = as_dict(payload.get("content_block"))
            self._blocks[index] = copy.deepcopy(block)
            forwardable = block.get("type") in _FORWARDABLE_BLOCKS and self._message is not None
            if forwardable and not self._holding:
                self._client_index[index] = len(self._sent)
                sent = _SentBlock(copy.deepcopy(block))
                sent.buffer.append(str(block.get(_TEXT_KEYS.get(str(block.get("type")), "")) or ""))
                self._sent.append(sent)
            else:
                self._holding = True
        elif kind == "content_block_delta":
            self._apply_delta(index, as_dict(payload.get("delta")))
        elif kind == "content_block_stop":
            self._close_block(index)
        if self._holding or index not in self._client_index:
            return b""
        sent = self._sent[self._client_index[index]]
        delta = as_dict(payload.get("delta"))
        if kind == "content_block_stop":
            sent.stopped = True
        elif delta.get("type") == "signature_delta":
            sent.signature += str(delta.get("signature") or "")
        elif (key := _DELTA_KEYS.get(str(delta.get("type")))) is not None:
            sent.buffer.append(str(delta.get(key) or ""))
        forwarded = {**payload, "index": self._client_index[index]}
        return event.raw if forwarded == payload else encode_json(forwarded, kind)

    def _apply_delta(self, index: int, delta: JSONObject) -> None:
        block = self._blocks.setdefault(index, {})
        kind = delta.get("type")
        if kind == "input_json_delta":
            self._json.setdefault(index, []).append(str(delta.get("partial_json") or ""))
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))
        elif (key := _DELTA_KEYS.get(str(kind))) is not None:
            self._texts.setdefault((index, key), TextBuffer()).append(str(delta.get(key) or ""))

    def _close_block(self, index: int) -> None:
        pieces = self._json.pop(index, None)
        if pieces is None:
            return
        text = "".join(pieces)
        try:
            value = loads_json(text, MAX_ANSWER_DEPTH) if text.strip() else {}
        except ValueError as error:
            raise StreamError(f"malformed tool input JSON in block {index}: {error}") from None
        self._blocks.setdefault(index, {})["input"] = value

    def _result(self) -> JSONObject:
        if self._message is None:
            raise StreamError("stream ended before message_start")
        if not self._stopped:
            raise StreamError("stream ended before message_stop")
        for index in list(self._json):
            self._close_block(index)
        result = copy.deepcopy(self._message)
        blocks = copy.deepcopy(self._blocks)
        for (index, key), buffer in self._texts.items():
            block = blocks.setdefault(index, {})
            block[key] = str(block.get(key) or "") + buffer.value
        result["content"] = [blocks[index] for index in sorted(blocks)]
        result.update(copy.deepcopy(self._delta))
        result["usage"] = dict(self._usage)
        return result

    def client_view(self, response: Mapping[str, Any]) -> JSONObject:
        view = copy.deepcopy(dict(response))
        if self._message is None:
            return view
        view.update({key: self._message[key] for key in ("id", "model") if key in self._message})
        content = as_list(view.get("content"))
        extends = len(content) >= len(self._sent) and all(
            sent.extended_by(as_dict(block))
            for sent, block in zip(self._sent, content, strict=False)
        )
        if not extends:
            view["content"] = [sent.completed() for sent in self._sent] + content
        return view

    def tail(self, response: Mapping[str, Any]) -> bytes:
        view = self.client_view(response)
        out = bytearray()
        started = self._message
        if started is None:
            started = {**view, "content": [], "stop_reason": None, "stop_sequence": None}
            out += encode_json({"type": "message_start", "message": started}, "message_start")
        for position, raw_block in enumerate(as_list(view.get("content"))):
            block = as_dict(raw_block)
            if position >= len(self._sent):
                out += _render_block(position, block)
            elif not self._sent[position].stopped:
                out += _finish_block(position, block, self._sent[position])
        delta: JSONObject = {
            "stop_reason": view.get("stop_reason"),
            "stop_sequence": view.get("stop_sequence"),
        }
        skipped = {"content", "usage", *started}
        delta.update({key: value for key, value in view.items() if key not in skipped})
        usage = view.get("usage") or {}
        out += encode_json(
            {"type": "message_delta", "delta": delta, "usage": usage}, "message_delta"
        )
        out += encode_json({"type": "message_stop"}, "message_stop")
        return bytes(out)

    def fail(self, status: int, message: str, *, kind: str) -> bytes:
        return encode_json(anthropic_error(status, message, kind=kind), "error")


def _block_events(position: int, start: JSONObject | None, deltas: list[JSONObject]) -> bytes:
    out = bytearray()
    if start is not None:
        payload = {"type": "content_block_start", "index": position, "content_block": start}
        out += encode_json(payload, "content_block_start")
    for delta in deltas:
        payload = {"type": "content_block_delta", "index": position, "delta": delta}
        out += encode_json(payload, "content_block_delta")
    out += encode_json({"type": "content_block_stop", "index": position}, "content_block_stop")
    return bytes(out)


def _text_deltas(kind: str, text: str) -> list[JSONObject]:
    key = _TEXT_KEYS[kind]
    return [{"type": f"{key}_delta", key: piece} for piece in split_pieces(text)]


def _render_block(position: int, block: JSONObject) -> bytes:
    """A block as the API streams it: an empty start, deltas, stop."""
    kind = str(block.get("type"))
    if kind in _TEXT_KEYS:
        start = {**block, _TEXT_KEYS[kind]: ""}
        deltas = _text_deltas(kind, str(block.get(_TEXT_KEYS[kind]) or ""))
        if block.get("signature"):
            start["signature"] = ""
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        return _block_events(position, start, deltas)
    if isinstance(block.get("input"), dict):
        arguments = json.dumps(block["input"], ensure_ascii=False)
        pieces = [
            {"type": "input_json_delta", "partial_json": piece} for piece in split_pieces(arguments)
        ]
        return _block_events(position, {**block, "input": {}}, pieces)
    return _block_events(position, block, [])


def _finish_block(position: int, block: JSONObject, sent: _SentBlock) -> bytes:
    """The rest of a block the client has partly received."""
    kind = str(block.get("type"))
    deltas: list[JSONObject] = []
    if kind in _TEXT_KEYS:
        text = str(block.get(_TEXT_KEYS[kind]) or "")
        deltas = _text_deltas(kind, text[len(sent.buffer.value) :])
    signature = block.get("signature")
    if signature and not sent.signature:
        deltas.append({"type": "signature_delta", "signature": signature})
    return _block_events(position, None, deltas)
