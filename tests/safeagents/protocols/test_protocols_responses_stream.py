"""Responses streaming specifics: held items after a call, numbering, fallbacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from safeagents.protocols import RESPONSES, encode_json, parse_events

DATA = Path(__file__).parent / "data"
CODEX = (DATA / "responses_codex.sse").read_bytes()
BASE = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "model": "m",
    "status": "in_progress",
}
CALL = {
    "id": "fc_1",
    "type": "function_call",
    "status": "completed",
    "call_id": "call_1",
    "name": "shell",
    "arguments": '{"command":"ls"}',
}
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "after", "annotations": []}],
}


def events(*payloads: dict[str, Any], numbered: bool = True) -> bytes:
    out = b""
    for number, payload in enumerate(payloads):
        body = {**payload, "sequence_number": number} if numbered else payload
        out += encode_json(body, payload["type"])
    return out


def call_then_message(numbered: bool = True) -> bytes:
    where = {"item_id": "msg_1", "output_index": 1, "content_index": 0}
    return events(
        {"type": "response.created", "response": {**BASE, "output": []}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**CALL, "arguments": ""},
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": CALL["arguments"],
        },
        {"type": "response.output_item.done", "output_index": 0, "item": CALL},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {**MESSAGE, "content": []},
        },
        {
            "type": "response.content_part.added",
            **where,
            "part": {"type": "output_text", "text": ""},
        },
        {"type": "response.output_text.delta", **where, "delta": "after"},
        {"type": "response.output_item.done", "output_index": 1, "item": MESSAGE},
        {
            "type": "response.completed",
            "response": {**BASE, "status": "completed", "output": [CALL, MESSAGE]},
        },
        numbered=numbered,
    )


def payloads(stream: bytes) -> list[dict[str, Any]]:
    return [json.loads(event.data) for event in parse_events(stream)]


def test_items_after_a_call_are_held_and_renumbered_in_the_tail() -> None:
    assembler = RESPONSES.assembler()
    head = assembler.feed(call_then_message())
    assert [item["type"] for item in payloads(head)] == ["response.created"]
    filtered = RESPONSES.without_calls(assembler.finish(), ["call_1"])
    stream = head + assembler.tail(filtered)
    added = [item for item in payloads(stream) if item["type"] == "response.output_item.added"]
    assert [(item["output_index"], item["item"]["id"]) for item in added] == [(0, "msg_1")]
    assert [item["sequence_number"] for item in payloads(stream)] == list(
        range(len(payloads(stream)))
    )
    again = RESPONSES.assembler()
    again.feed(stream)
    assert again.finish() == filtered


def test_upstream_without_sequence_numbers_gets_them() -> None:
    assembler = RESPONSES.assembler()
    head = assembler.feed(call_then_message(numbered=False))
    stream = head + assembler.tail(assembler.finish())
    assert [item["sequence_number"] for item in payloads(stream)] == list(
        range(len(payloads(stream)))
    )


def test_completed_without_output_falls_back_to_streamed_items() -> None:
    kept = []
    for event in parse_events(CODEX):
        payload = json.loads(event.data)
        if payload["type"] == "response.output_item.done":
            continue
        if payload["type"] == "response.completed":
            payload["response"]["output"] = []
        kept.append(encode_json(payload, payload["type"]))
    assembler = RESPONSES.assembler()
    assembler.feed(b"".join(kept))
    output = assembler.finish()["output"]
    assert [item["type"] for item in output] == [
        "reasoning",
        "message",
        "function_call",
        "custom_tool_call",
    ]
    assert output[1]["content"][0]["text"] == "I'll check the tests."
    assert json.loads(output[2]["arguments"])["command"] == ["bash", "-lc", "rm -rf tests"]
    assert output[3]["input"].startswith("*** Begin Patch") and output[3]["input"].endswith(
        "End Patch"
    )
    assert [call.id for call in RESPONSES.tool_calls({"output": output})] == [
        "call_shell_1",
        "call_patch_2",
    ]


def test_incomplete_response_ends_with_its_own_event() -> None:
    assembler = RESPONSES.assembler()
    head = assembler.feed(CODEX)
    response = {**assembler.finish(), "status": "incomplete"}
    last = payloads(head + assembler.tail(response))[-1]
    assert last["type"] == "response.incomplete" and last["response"]["status"] == "incomplete"


def test_forwarded_events_keep_upstream_bytes_when_numbering_matches() -> None:
    head = RESPONSES.assembler().feed(CODEX)
    assert CODEX.startswith(head) and b"response.output_text.delta" in head
