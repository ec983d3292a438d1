"""Streaming for every dialect: chunking, immediate text, held calls, head + tail validity."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from safeagents.protocols import (
    CHAT,
    MESSAGES,
    RESPONSES,
    Dialect,
    SSEEvent,
    SSEParser,
    StreamError,
    parse_events,
)

DATA = Path(__file__).parent / "data"
FIXTURES: list[tuple[Dialect, str]] = [
    (CHAT, "chat_openai_tools"),
    (CHAT, "chat_vllm_tokens"),
    (CHAT, "chat_text_small"),
    (CHAT, "chat_tool_small"),
    (RESPONSES, "responses_codex"),
    (RESPONSES, "responses_small"),
    (MESSAGES, "messages_claude"),
    (MESSAGES, "messages_small"),
]
SMALL = [fixture for fixture in FIXTURES if fixture[1].endswith("_small")]
EXPECTED = [fixture for fixture in FIXTURES if (DATA / f"{fixture[1]}.json").exists()]
IDS = [name for _, name in FIXTURES]
CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")


def raw(name: str) -> bytes:
    return (DATA / f"{name}.sse").read_bytes()


def variants(stream: bytes) -> list[bytes]:
    return [stream, stream.replace(b"\n", b"\r\n"), stream.replace(b"\n", b"\r")]


def run(dialect: Dialect, stream: bytes, cuts: list[int]) -> tuple[bytes, dict[str, Any]]:
    assembler = dialect.assembler()
    bounds = [0, *sorted(cuts), len(stream)]
    head = b"".join(assembler.feed(stream[a:b]) for a, b in itertools.pairwise(bounds))
    return head, assembler.finish()


def reparse(dialect: Dialect, stream: bytes) -> dict[str, Any]:
    assembler = dialect.assembler()
    assembler.feed(stream)
    return assembler.finish()


def event_text(dialect: Dialect, event: SSEEvent) -> str:
    if event.data == "[DONE]":
        return ""
    payload = json.loads(event.data)
    if dialect is CHAT:
        return "".join(
            choice["delta"].get(key) or ""
            for choice in payload.get("choices", [])
            for key in ("content", "reasoning_content", "reasoning")
        )
    if dialect is RESPONSES:
        deltas = ("response.output_text.delta", "response.reasoning_summary_text.delta")
        return str(payload["delta"]) if payload["type"] in deltas else ""
    delta = payload.get("delta", {})
    return str(delta.get("text") or delta.get("thinking") or "")


def starts_tool_call(dialect: Dialect, event: SSEEvent) -> bool:
    if event.data == "[DONE]":
        return False
    payload = json.loads(event.data)
    if dialect is CHAT:
        return any(choice["delta"].get("tool_calls") for choice in payload.get("choices", []))
    if dialect is RESPONSES:
        return payload["type"] == "response.output_item.added" and (
            payload["item"]["type"] in CALL_ITEMS
        )
    block = payload.get("content_block", {})
    return bool(payload["type"] == "content_block_start" and block.get("type") == "tool_use")


def validate(dialect: Dialect, stream: bytes) -> None:
    """The stream is what a client of that API accepts: order, indices, terminators."""
    events = parse_events(stream)
    if dialect is CHAT:
        validate_chat(events)
    elif dialect is RESPONSES:
        validate_responses(events)
    else:
        validate_messages(events)


def validate_chat(events: list[SSEEvent]) -> None:
    assert [event.data for event in events].index("[DONE]") == len(events) - 1
    chunks = [json.loads(event.data) for event in events[:-1]]
    assert len({chunk["id"] for chunk in chunks}) == 1
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    indices: list[int] = []
    finish = None
    for chunk in chunks:
        for choice in chunk["choices"]:
            assert finish is None, "delta after the finish chunk"
            for call in choice["delta"].get("tool_calls", []):
                if call["index"] not in indices:
                    assert call["index"] == len(indices) and call["id"] and call["function"]["name"]
                    indices.append(call["index"])
            finish = choice.get("finish_reason")
    assert finish is not None
    assert (finish == "tool_calls") == bool(indices)


def validate_responses(events: list[SSEEvent]) -> None:
    payloads = [json.loads(event.data) for event in events]
    assert [payload["sequence_number"] for payload in payloads] == list(range(len(payloads)))
    assert all(
        event.event == payload["type"] for event, payload in zip(events, payloads, strict=True)
    )
    assert payloads[0]["type"] == "response.created"
    kinds = [payload["type"] for payload in payloads]
    assert kinds[-1] in ("response.completed", "response.incomplete", "response.failed")
    assert sum(kind.startswith("response.completed") for kind in kinds) <= 1
    open_items: set[int] = set()
    next_index = 0
    done: list[dict[str, Any]] = []
    for payload in payloads[1:-1]:
        if payload["type"] == "response.output_item.added":
            assert payload["output_index"] == next_index and not open_items
            open_items.add(next_index)
            next_index += 1
        elif "output_index" in payload:
            assert payload["output_index"] in open_items
        if payload["type"] == "response.output_item.done":
            open_items.remove(payload["output_index"])
            done.append(payload["item"])
    assert not open_items
    assert payloads[-1]["response"]["output"] == done


def validate_messages(events: list[SSEEvent]) -> None:
    payloads = [json.loads(event.data) for event in events if event.event != "ping"]
    kinds = [payload["type"] for payload in payloads]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    open_index: int | None = None
    next_index = 0
    tool_uses = 0
    for payload in payloads[1:-2]:
        if payload["type"] == "content_block_start":
            assert open_index is None and payload["index"] == next_index
            open_index, next_index = next_index, next_index + 1
            tool_uses += payload["content_block"]["type"] == "tool_use"
        else:
            assert payload["index"] == open_index
            if payload["type"] == "content_block_stop":
                open_index = None
    assert open_index is None
    assert (payloads[-2]["delta"]["stop_reason"] == "tool_use") == (tool_uses > 0)


@pytest.mark.parametrize(("dialect", "name"), EXPECTED, ids=[name for _, name in EXPECTED])
def test_assembles_the_documented_response(dialect: Dialect, name: str) -> None:
    expected = json.loads((DATA / f"{name}.json").read_text())
    for stream in variants(raw(name)):
        assert run(dialect, stream, [])[1] == expected


@pytest.mark.parametrize(("dialect", "name"), FIXTURES, ids=IDS)
def test_byte_at_a_time_equals_one_shot(dialect: Dialect, name: str) -> None:
    for stream in variants(raw(name)):
        assert run(dialect, stream, list(range(len(stream)))) == run(dialect, stream, [])


@pytest.mark.parametrize(("dialect", "name"), SMALL, ids=[name for _, name in SMALL])
def test_every_split_point_equals_one_shot(dialect: Dialect, name: str) -> None:
    for stream in variants(raw(name)):
        whole = run(dialect, stream, [])
        for cut in range(len(stream) + 1):
            assert run(dialect, stream, [cut]) == whole, cut


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(FIXTURES),
    st.sampled_from([0, 1, 2]),
    st.lists(st.floats(min_value=0, max_value=1), max_size=25),
)
def test_random_chunking_equals_one_shot(
    fixture: tuple[Dialect, str], variant: int, fractions: list[float]
) -> None:
    dialect, name = fixture
    stream = variants(raw(name))[variant]
    cuts = [int(fraction * len(stream)) for fraction in fractions]
    assert run(dialect, stream, cuts) == run(dialect, stream, [])


@pytest.mark.parametrize(("dialect", "name"), FIXTURES, ids=IDS)
def test_text_is_forwarded_as_soon_as_its_event_is_complete(dialect: Dialect, name: str) -> None:
    stream = raw(name).replace(b"\n", b"\r\n")
    assembler, upstream = dialect.assembler(), SSEParser()
    forwarded = bytearray()
    text_before_tools = ""
    tools_started = False
    for position in range(len(stream)):
        byte = stream[position : position + 1]
        forwarded += assembler.feed(byte)
        for event in upstream.feed(byte):
            tools_started = tools_started or starts_tool_call(dialect, event)
            if not tools_started:
                text_before_tools += event_text(dialect, event)
            sent = "".join(event_text(dialect, item) for item in parse_events(bytes(forwarded)))
            assert sent == text_before_tools
    assert text_before_tools  # every fixture streams some text first


@pytest.mark.parametrize(("dialect", "name"), FIXTURES, ids=IDS)
def test_head_holds_tool_calls_and_terminators(dialect: Dialect, name: str) -> None:
    assembler = dialect.assembler()
    head = assembler.feed(raw(name))
    response = assembler.finish()
    for call in dialect.tool_calls(response):
        assert json.dumps(call.id).encode() not in head
        assert json.dumps(call.name).encode() not in head
        values = (
            call.arguments.values() if isinstance(call.arguments, Mapping) else [call.arguments]
        )
        for value in values:
            if isinstance(value, str) and len(value) > 3:
                assert json.dumps(value)[1:12].encode() not in head
    for marker in (b"[DONE]", b"response.completed", b"message_delta", b"message_stop"):
        assert marker not in head
    if dialect is not MESSAGES:  # message_start carries the input usage
        assert b'"usage":{' not in head
    assert b'"finish_reason":"' not in head and b'"stop_reason":"' not in head


@pytest.mark.parametrize(("dialect", "name"), FIXTURES, ids=IDS)
def test_head_plus_tail_reassembles_every_filtering(dialect: Dialect, name: str) -> None:
    for stream in variants(raw(name))[:2]:
        assembler = dialect.assembler()
        head = assembler.feed(stream)
        response = assembler.finish()
        ids = [call.id for call in dialect.tool_calls(response)]
        subsets = [
            combo for size in range(len(ids) + 1) for combo in itertools.combinations(ids, size)
        ]
        for blocked in subsets:
            filtered = dialect.without_calls(response, blocked)
            tail = assembler.tail(filtered)
            assert tail == assembler.tail(filtered)  # tail does not change the assembler
            validate(dialect, head + tail)
            assert reparse(dialect, head + tail) == filtered
            assert assembler.client_view(filtered) == filtered
            kept = [call.id for call in dialect.tool_calls(reparse(dialect, head + tail))]
            assert kept == [call_id for call_id in ids if call_id not in blocked]


@pytest.mark.parametrize(("dialect", "name"), FIXTURES, ids=IDS)
def test_stream_events_renders_a_whole_response(dialect: Dialect, name: str) -> None:
    response = reparse(dialect, raw(name))
    request = dialect.parse_request({"model": "m"})
    for candidate in (response, dialect.text_response(request, "Stopped: rule x.")):
        stream = dialect.stream_events(candidate)
        validate(dialect, stream)
        assert reparse(dialect, stream) == candidate


@pytest.mark.parametrize(("dialect", "name"), FIXTURES, ids=IDS)
def test_tail_of_a_reasked_answer_continues_after_the_sent_text(
    dialect: Dialect, name: str
) -> None:
    assembler = dialect.assembler()
    head = assembler.feed(raw(name))
    first = assembler.finish()
    request = dialect.parse_request({"model": "m"})
    second = dialect.text_response(request, "Second answer.")
    view = assembler.client_view(second)
    stream = head + assembler.tail(second)
    validate(dialect, stream)
    assert reparse(dialect, stream) == view
    all_text = json.dumps(view)
    assert "Second answer." in all_text
    for event in parse_events(head):
        assert json.dumps(event_text(dialect, event))[1:-1] in all_text
    assert view["id"] == first["id"]
    assert dialect.tool_calls(view) == []


@pytest.mark.parametrize(("dialect", "name"), FIXTURES, ids=IDS)
def test_any_head_can_be_ended_with_a_synthetic_answer(dialect: Dialect, name: str) -> None:
    events = parse_events(raw(name))
    answer = dialect.text_response(dialect.parse_request({"model": "m"}), "Stopped.")
    for end in range(len(events) + 1):
        assembler = dialect.assembler()
        head = assembler.feed(b"".join(event.raw for event in events[:end]))
        stream = head + assembler.tail(answer)
        validate(dialect, stream)
        assert reparse(dialect, stream) == assembler.client_view(answer)
        assert "Stopped." in json.dumps(assembler.client_view(answer))


@pytest.mark.parametrize(("dialect", "name"), FIXTURES, ids=IDS)
def test_malformed_json_raises_stream_error(dialect: Dialect, name: str) -> None:
    events = parse_events(raw(name))
    broken = events[0].raw + b'data: {"broken": \n\n' + b"".join(event.raw for event in events[1:])
    assembler = dialect.assembler()
    with pytest.raises(StreamError, match="malformed JSON"):
        assembler.feed(broken)
    with pytest.raises(StreamError):
        assembler.finish()


@pytest.mark.parametrize(("dialect", "name"), FIXTURES, ids=IDS)
def test_stream_cut_before_completion_raises_stream_error(dialect: Dialect, name: str) -> None:
    events = parse_events(raw(name))
    last_text = max(i for i, event in enumerate(events) if event_text(dialect, event))
    for end in (0, 1, last_text):
        assembler = dialect.assembler()
        assembler.feed(b"".join(event.raw for event in events[:end]))
        with pytest.raises(StreamError, match="before"):
            assembler.finish()


@pytest.mark.parametrize(
    ("dialect", "error"),
    [
        (CHAT, b'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n'),
        (
            RESPONSES,
            b'event: error\ndata: {"type": "error", "code": "x", "message": "overloaded"}\n\n',
        ),
        (
            MESSAGES,
            b'event: error\ndata: {"type": "error", "error": '
            b'{"type": "overloaded_error", "message": "overloaded"}}\n\n',
        ),
    ],
)
def test_upstream_error_event_raises_stream_error(dialect: Dialect, error: bytes) -> None:
    with pytest.raises(StreamError, match="overloaded"):
        dialect.assembler().feed(error)


def test_fail_ends_each_stream_in_the_api_shape() -> None:
    chat = parse_events(CHAT.assembler().fail(502, "down", kind="upstream_unavailable"))
    assert json.loads(chat[0].data)["error"]["code"] == "upstream_unavailable"
    assert chat[-1].data == "[DONE]"
    assembler = RESPONSES.assembler()
    head = assembler.feed(raw("responses_small").split(b"event: response.output_item.added")[0])
    stream = head + assembler.fail(504, "slow", kind="upstream_timeout")
    validate(RESPONSES, stream)
    failed = json.loads(parse_events(stream)[-1].data)["response"]
    assert failed["status"] == "failed" and failed["error"]["code"] == "upstream_timeout"
    [event] = parse_events(MESSAGES.assembler().fail(529, "busy", kind="upstream_unavailable"))
    assert event.event == "error"
    assert json.loads(event.data)["error"] == {"type": "overloaded_error", "message": "busy"}
