"""Anthropic Messages streaming specifics: held blocks after tool_use, pings, bad tool JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from safeagents.protocols import MESSAGES, StreamError, encode_json, parse_events

START: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 1},
}


def events(*payloads: dict[str, Any]) -> bytes:
    return b"".join(encode_json(payload, payload["type"]) for payload in payloads)


def tool_then_text(partial_json: str = '{"command": "ls"}') -> bytes:
    return events(
        {"type": "message_start", "message": START},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "tu_1", "name": "Bash", "input": {}},
        },
        {"type": "ping"},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": partial_json},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "later"},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 20},
        },
        {"type": "message_stop"},
    )


def test_blocks_after_tool_use_are_held_and_reindexed() -> None:
    assembler = MESSAGES.assembler()
    head = assembler.feed(tool_then_text())
    assert [event.event for event in parse_events(head)] == ["message_start", "ping"]
    response = assembler.finish()
    assert response["content"] == [
        {"type": "tool_use", "id": "tu_1", "name": "Bash", "input": {"command": "ls"}},
        {"type": "text", "text": "later"},
    ]
    assert response["usage"] == {"input_tokens": 10, "output_tokens": 20}
    filtered = MESSAGES.without_calls(response, ["tu_1"])
    stream = head + assembler.tail(filtered)
    starts = [json.loads(e.data) for e in parse_events(stream) if e.event == "content_block_start"]
    assert [(item["index"], item["content_block"]["type"]) for item in starts] == [(0, "text")]
    again = MESSAGES.assembler()
    again.feed(stream)
    assert again.finish() == filtered and filtered["stop_reason"] == "end_turn"


def test_pings_are_forwarded_at_once() -> None:
    assembler = MESSAGES.assembler()
    assembler.feed(tool_then_text().split(b"event: ping")[0])
    assert assembler.feed(b'event: ping\ndata: {"type": "ping"}\n\n') == (
        b'event: ping\ndata: {"type": "ping"}\n\n'
    )


def test_malformed_tool_input_raises_stream_error() -> None:
    with pytest.raises(StreamError, match="tool input"):
        MESSAGES.assembler().feed(tool_then_text(partial_json='{"command": '))


def test_empty_tool_input_is_an_empty_object() -> None:
    assembler = MESSAGES.assembler()
    assembler.feed(tool_then_text(partial_json=""))
    assert MESSAGES.tool_calls(assembler.finish())[0].arguments == {}
