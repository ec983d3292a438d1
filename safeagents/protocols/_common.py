"""JSON helpers shared by the dialects: loose accessors, ids, hashing, rejection checks."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import uuid
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from .._actions import json_too_deep
from ._sse import SSEEvent

__all__ = [
    "MAX_ANSWER_DEPTH",
    "MAX_REQUEST_DEPTH",
    "SIBLING_NOTE",
    "JSONObject",
    "StreamError",
    "TextBuffer",
    "arguments_json",
    "as_dict",
    "as_list",
    "chat_call",
    "check_rejections",
    "decode_event",
    "loads_json",
    "new_id",
    "part_text",
    "prefix_keys",
    "prune",
    "restored_entries",
    "result_text",
    "said_text",
    "split_pieces",
    "text_of",
    "transcript_text",
]

JSONObject = dict[str, Any]

SIBLING_NOTE = (
    "(not executed: another call in this turn was blocked; call it again if still needed)"
)

MAX_REQUEST_DEPTH = 128
"""Request bodies nesting lists and objects deeper than this are refused (400)."""
MAX_ANSWER_DEPTH = 100
"""Upstream answers nesting deeper than this are refused (502): a stored answer is replayed
inside later requests (a few levels further down), which must stay within the request bound."""

_TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})


class StreamError(ValueError):
    """An upstream SSE stream that cannot be assembled (bad JSON, error event, cut short)."""


class TextBuffer:
    """A growing string: appends are O(1), ``value`` joins the pieces once."""

    __slots__ = ("_pieces",)

    def __init__(self) -> None:
        self._pieces: list[str] = []

    def append(self, piece: str) -> None:
        if piece:
            self._pieces.append(piece)

    @property
    def value(self) -> str:
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""


def as_dict(value: Any) -> JSONObject:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def new_id(prefix: str) -> str:
    """A fresh id in the API's style, e.g. ``chatcmpl-…``, ``resp_…``, ``msg_…``."""
    return prefix + uuid.uuid4().hex[:24]


def split_pieces(text: str, parts: int = 3) -> list[str]:
    """``text`` cut into at most ``parts`` non-empty pieces, like a server's deltas."""
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[start : start + size] for start in range(0, len(text), size)]


def text_of(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a part list."""
    if isinstance(content, str):
        return content
    texts = [
        str(part.get("text") or "")
        for part in as_list(content)
        if isinstance(part, dict) and part.get("type") in _TEXT_PART_TYPES
    ]
    return "\n".join(text for text in texts if text)


def transcript_text(content: Any) -> str:
    """:func:`text_of` a message content; anything else (but ``None``) as JSON."""
    if content is None or isinstance(content, (str, list)):
        return text_of(content)
    return json.dumps(content, ensure_ascii=False)


def part_text(value: Any) -> str:
    """A string, or the ``text`` of every part of a part list (whatever its type), joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(part.get("text") or "") for part in value if isinstance(part, Mapping))
    return ""


REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")
"""Where chat-shaped assistant messages of the dialects (and recorded sessions) keep reasoning."""


def said_text(message: Mapping[str, Any]) -> str:
    """What an assistant chat message says in its own words: its reasoning, then its content."""
    parts = [part_text(message.get(key)) for key in (*REASONING_KEYS, "content")]
    return "\n".join(part for part in parts if part)


def result_text(value: Any) -> str:
    """A tool result's output as the detectors read it: :func:`part_text`, other values as JSON."""
    if value is None or isinstance(value, (str, list)):
        return part_text(value)
    return json.dumps(value, ensure_ascii=False)


def arguments_json(arguments: Mapping[str, Any] | str) -> str:
    """Tool call arguments as the JSON string OpenAI carries (a string stays as it is)."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(dict(arguments), ensure_ascii=False)


def chat_call(call_id: Any, name: Any, arguments: Any) -> JSONObject:
    """One OpenAI chat ``tool_calls`` entry."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return {
        "id": str(call_id or ""),
        "type": "function",
        "function": {"name": str(name or ""), "arguments": arguments},
    }


def restored_entries(
    message: JSONObject, key: str, originals: Mapping[str, JSONObject]
) -> JSONObject | None:
    """An assistant ``message`` whose ``key`` entries named in ``originals`` (by ``id``) are put
    back as they were; ``None`` when nothing changes."""
    entries = message.get(key)
    if message.get("role") != "assistant" or not isinstance(entries, list):
        return None
    replaced = [
        copy.deepcopy(originals[str(entry.get("id"))])
        if isinstance(entry, dict) and str(entry.get("id")) in originals
        else entry
        for entry in entries
    ]
    return {**message, key: replaced} if replaced != entries else None


def prune(value: Any, drop: Collection[str] = ()) -> Any:
    """A copy without ``None`` values and without keys in ``drop``, at every depth."""
    if isinstance(value, dict):
        return {
            key: prune(item, drop)
            for key, item in value.items()
            if item is not None and key not in drop
        }
    if isinstance(value, list):
        return [prune(item, drop) for item in value]
    return value


def prefix_keys(items: Iterable[Any]) -> tuple[str, ...]:
    """Chained hashes: entry ``n`` identifies the first ``n`` items (entry 0: none)."""
    keys = [hashlib.blake2b(b"safeagents-conversation", digest_size=16).hexdigest()]
    for item in items:
        encoded = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest = hashlib.blake2b(keys[-1].encode() + encoded.encode(), digest_size=16)
        keys.append(digest.hexdigest())
    return tuple(keys)


_DECODER = json.JSONDecoder()


def decode_event(event: SSEEvent) -> JSONObject:
    """The JSON object in an event's data; :class:`StreamError` if it is not one."""
    data = event.data
    if _may_nest(data, MAX_ANSWER_DEPTH):
        payload = _loads(data)
    else:
        try:
            payload, end = _DECODER.raw_decode(data)  # json.loads without its whitespace scans
            if end != len(data) and not data[end:].isspace():
                raise ValueError("extra data")
        except ValueError:
            payload = _loads(data)
    if not isinstance(payload, dict):
        raise StreamError(f"SSE data is not a JSON object: {event.data[:200]!r}")
    return payload


def _loads(data: str) -> Any:
    try:
        return loads_json(data, MAX_ANSWER_DEPTH)
    except ValueError as error:
        raise StreamError(f"malformed JSON in SSE data ({error}): {data[:200]!r}") from None


def loads_json(data: str | bytes, limit: int, *, finite: bool = False) -> Any:
    """``json.loads(data)``; :class:`ValueError` also for lists and objects nested more than
    ``limit`` levels deep, so no later recursive walk of the value can overflow the stack, and
    with ``finite`` for ``NaN``, ``Infinity`` and numbers too large for a float (which no JSON
    encoder could write back)."""
    try:
        value = _FINITE.decode(_text(data)) if finite else json.loads(data)
    except RecursionError:
        value, deep = None, True
    else:
        deep = _may_nest(data, limit) and json_too_deep(value, limit)
    if deep:
        raise ValueError(f"JSON nested more than {limit} levels deep")
    return value


def _text(data: str | bytes) -> str:
    if isinstance(data, str):
        return data
    return data.decode(json.detect_encoding(data), "surrogatepass")  # as json.loads does


def _not_a_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text[:40]} is too large a number")
    return value


_FINITE = json.JSONDecoder(parse_constant=_not_a_number, parse_float=_finite_float)


def _may_nest(data: str | bytes, limit: int) -> bool:
    """Whether ``data`` has enough brackets to nest more than ``limit`` levels (a fast test)."""
    if isinstance(data, str):
        return data.count("[") + data.count("{") > limit
    return data.count(b"[") + data.count(b"{") > limit


def check_rejections(call_ids: Collection[str], rejections: Mapping[str, str]) -> None:
    """Reject a re-ask that names calls the response does not contain."""
    if not call_ids:
        raise ValueError("the response has no tool calls to reject")
    unknown = sorted(set(rejections) - set(call_ids))
    if unknown:
        raise ValueError(f"rejections name unknown tool call ids: {', '.join(unknown)}")
