"""Chat Completions streaming specifics: token fields, usage chunks, mixed and odd chunks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from safeagents.protocols import CHAT, encode_json, parse_events

DATA = Path(__file__).parent / "data"
ENVELOPE = {"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 5, "model": "m"}


def chunk(*choices: dict[str, Any], **top: Any) -> bytes:
    return encode_json({**ENVELOPE, "choices": list(choices), **top})


def choice(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}


def data_chunks(stream: bytes) -> list[dict[str, Any]]:
    return [json.loads(event.data) for event in parse_events(stream) if event.data != "[DONE]"]


def test_token_fields_are_stripped_for_a_client_that_did_not_ask() -> None:
    request = CHAT.parse_request({"stream": True, "stream_options": {"include_usage": True}})
    assembler = CHAT.assembler(request)
    head = assembler.feed((DATA / "chat_vllm_tokens.sse").read_bytes())
    response = assembler.finish()
    assert response["prompt_token_ids"] and response["choices"][0]["token_ids"]
    assert CHAT.extract_tokens(response) is not None  # the proxy still records them
    filtered = CHAT.without_calls(response, ["chatcmpl-tool-9a8b7c"])
    tail = assembler.tail(filtered)
    for part in (head, tail):
        assert b"token_ids" not in part and b'"logprobs":{' not in part
    assembled = CHAT.assembler()
    assembled.feed(head + tail)
    assert assembled.finish() == CHAT.strip_token_fields(filtered, request)


def test_logprobs_are_kept_for_a_client_that_asked_for_them() -> None:
    request = CHAT.parse_request({"logprobs": True, "stream_options": {"include_usage": True}})
    assembler = CHAT.assembler(request)
    head = assembler.feed((DATA / "chat_vllm_tokens.sse").read_bytes())
    response = assembler.finish()
    tail = assembler.tail(response)
    assert b"token_ids" not in head + tail
    assembled = CHAT.assembler()
    assembled.feed(head + tail)
    result = assembled.finish()
    assert result == CHAT.strip_token_fields(response, request)
    assert len(result["choices"][0]["logprobs"]["content"]) == 10


def test_usage_chunk_only_when_the_client_asked_for_it() -> None:
    stream = (DATA / "chat_openai_tools.sse").read_bytes()
    for include_usage in (False, True):
        request = CHAT.parse_request(
            {"stream": True, "stream_options": {"include_usage": include_usage}}
        )
        assembler = CHAT.assembler(request)
        head = assembler.feed(stream)
        tail = assembler.tail(assembler.finish())
        usage_chunks = [item for item in data_chunks(head + tail) if item.get("usage")]
        assert len(usage_chunks) == int(include_usage)


def test_text_and_tool_call_in_one_chunk_forward_only_the_text() -> None:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": "{}"},
    }
    stream = (
        chunk(choice({"role": "assistant", "content": "Done.", "tool_calls": [call]}))
        + chunk(choice({}, "tool_calls"))
        + b"data: [DONE]\n\n"
    )
    assembler = CHAT.assembler()
    head = assembler.feed(stream)
    assert data_chunks(head)[0]["choices"][0]["delta"] == {"role": "assistant", "content": "Done."}
    response = assembler.finish()
    assert [call.id for call in CHAT.tool_calls(response)] == ["call_1"]
    assert b"call_1" in assembler.tail(response)


def test_tool_call_deltas_without_index_are_told_apart_by_id() -> None:
    first = {"id": "a", "type": "function", "function": {"name": "x", "arguments": '{"n":'}}
    second = {"id": "b", "type": "function", "function": {"name": "y", "arguments": "{}"}}
    stream = (
        chunk(choice({"tool_calls": [first]}))
        + chunk(choice({"tool_calls": [{"function": {"arguments": " 1}"}}]}))
        + chunk(choice({"tool_calls": [second]}))
        + chunk(choice({}, "tool_calls"))
    )
    assembler = CHAT.assembler()
    assert assembler.feed(stream) == b""
    calls = CHAT.tool_calls(assembler.finish())
    assert [(call.id, call.name, call.arguments) for call in calls] == [
        ("a", "x", {"n": 1}),
        ("b", "y", {}),
    ]


def test_two_choices_stream_and_finish_independently() -> None:
    stream = (
        chunk(choice({"role": "assistant", "content": "A"}), choice({"role": "assistant"}, index=1))
        + chunk(choice({"content": "B"}, index=1))
        + chunk(choice({}, "stop"), choice({}, "length", index=1))
        + b"data: [DONE]\n\n"
    )
    assembler = CHAT.assembler()
    head = assembler.feed(stream)
    response = assembler.finish()
    contents = [item["message"]["content"] for item in response["choices"]]
    assert contents == ["A", "B"]
    assert [item["finish_reason"] for item in response["choices"]] == ["stop", "length"]
    again = CHAT.assembler()
    again.feed(head + assembler.tail(response))
    assert again.finish() == response


def test_usage_on_content_chunks_is_held() -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    stream = chunk(choice({"content": "hi"}), usage=usage) + chunk(choice({}, "stop"))
    assembler = CHAT.assembler()
    [forwarded] = data_chunks(assembler.feed(stream))
    assert forwarded["usage"] is None and forwarded["choices"][0]["delta"] == {"content": "hi"}
    assert assembler.finish()["usage"] == usage


def test_events_after_done_are_ignored() -> None:
    stream = (
        chunk(choice({"content": "x"}, "stop"))
        + b"data: [DONE]\n\n"
        + chunk(choice({"content": "y"}))
    )
    assembler = CHAT.assembler()
    assembler.feed(stream)
    assert assembler.finish()["choices"][0]["message"]["content"] == "x"


def test_pure_text_chunks_pass_through_byte_for_byte() -> None:
    stream = (DATA / "chat_openai_tools.sse").read_bytes().replace(b"\n", b"\r\n")
    head = CHAT.assembler().feed(stream)
    assert stream.startswith(head)


def test_json_split_over_several_data_lines() -> None:
    stream = (
        b'data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",\r\n'
        b'data:  "choices": [{"index": 0, "delta": {"content": "multi"},\r\n'
        b'data:  "finish_reason": "stop"}]}\r\n\r\n'
    )
    assembler = CHAT.assembler()
    [forwarded] = data_chunks(assembler.feed(stream))
    assert forwarded["choices"][0] == {
        "index": 0,
        "delta": {"content": "multi"},
        "finish_reason": None,
    }
    assert assembler.finish()["choices"][0]["message"]["content"] == "multi"


def test_held_text_goes_out_only_with_the_tail() -> None:
    stream = chunk(choice({"role": "assistant", "content": "THOUGHT: go.\n```bash\n"}))
    stream += chunk(choice({"content": "rm -rf tests\n```"}, "stop")) + b"data: [DONE]\n\n"
    assembler = CHAT.assembler()
    assembler.holds_text = True
    assert assembler.feed(stream) == b""
    response = assembler.finish()
    assert assembler.held_events() == stream  # unchanged, the upstream's own bytes
    words = "THOUGHT: go.\n```bash\nprintf blocked\n```"
    rewritten, _ = CHAT.rewrite_content(response, words)
    assembled = CHAT.assembler()
    assembled.feed(assembler.tail(rewritten))
    assert assembled.finish()["choices"][0]["message"]["content"] == words
