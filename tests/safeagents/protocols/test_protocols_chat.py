"""Chat Completions: request summaries, tool calls, filtering, re-asks, rendering, tokens."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from safeagents._actions import ToolCall
from safeagents.protocols import CHAT, SIBLING_NOTE, RequestInfo

DATA = Path(__file__).parent / "data"

TOOLS = [
    {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}},
]
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are pi."},
    {"role": "user", "content": [{"type": "text", "text": "Fix the failing test."}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "pytest"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_0", "content": "1 failed"},
]
BODY: dict[str, Any] = {
    "model": "qwen3",
    "messages": MESSAGES,
    "tools": TOOLS,
    "stream": True,
    "stream_options": {"include_usage": True},
}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text())
    return data


def test_parse_request_summarises_the_body() -> None:
    info = CHAT.parse_request(BODY)
    assert (info.model, info.stream, info.tool_names) == ("qwen3", True, ("bash", "read"))
    assert (info.message_count, info.tool_result_count, info.has_tools) == (4, 1, True)
    assert info.first_user_text == "Fix the failing test."
    assert info.stream_usage and not info.wants_logprobs and not info.wants_token_ids


def test_parse_request_without_tools_or_stream() -> None:
    info = CHAT.parse_request({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert not info.has_tools and not info.stream and not info.stream_usage
    assert info.first_user_text == "hi"
    assert CHAT.parse_request({"logprobs": True, "return_token_ids": True}).wants_token_ids


def test_conversation_key_identifies_prefixes() -> None:
    info = CHAT.parse_request(BODY)
    extended = CHAT.parse_request(
        {**BODY, "messages": [*MESSAGES, {"role": "user", "content": "go"}]}
    )
    assert extended.conversation_key(4) == info.conversation_key(4)
    assert extended.conversation_key(5) != info.conversation_key(4)
    assert len({info.conversation_key(n) for n in range(5)}) == 5
    changed = copy.deepcopy(MESSAGES)
    changed[3]["content"] = "2 failed"
    other = CHAT.parse_request({"messages": changed})
    assert other.conversation_key(3) == info.conversation_key(3)
    assert other.conversation_key(4) != info.conversation_key(4)
    with pytest.raises(ValueError, match="4 items"):
        info.conversation_key(5)


def test_conversation_key_ignores_spelling_and_cache_hints() -> None:
    respelled = copy.deepcopy(MESSAGES)
    respelled[1] = {"role": "user", "content": "Fix the failing test.", "cache_control": {"x": 1}}
    respelled[2]["content"] = ""
    assert CHAT.parse_request({"messages": respelled}).conversation_key(4) == CHAT.parse_request(
        BODY
    ).conversation_key(4)


def test_tool_calls_decode_json_arguments() -> None:
    calls = CHAT.tool_calls(load("chat_openai_tools.json"))
    assert calls == [
        ToolCall("call_DdmO9pD3xa9XTPNJ32zg2hcA", "bash", {"command": "ls -la"}),
        ToolCall("call_Xr4dQ8pZ1nL0", "read", {"path": "tests/test_app.py"}),
    ]
    assert CHAT.tool_calls(CHAT.text_response(CHAT.parse_request(BODY), "done")) == []


def test_without_calls_removes_one_of_two_and_keeps_tool_calls_finish() -> None:
    response = load("chat_openai_tools.json")
    filtered = CHAT.without_calls(response, {"call_DdmO9pD3xa9XTPNJ32zg2hcA"})
    assert [call.id for call in CHAT.tool_calls(filtered)] == ["call_Xr4dQ8pZ1nL0"]
    assert filtered["choices"][0]["finish_reason"] == "tool_calls"
    assert filtered["choices"][0]["message"]["content"] == "I'll list the files first."
    assert len(response["choices"][0]["message"]["tool_calls"]) == 2  # input untouched


def test_without_calls_removing_all_ends_the_turn() -> None:
    response = load("chat_openai_tools.json")
    response["choices"][0]["message"]["content"] = None
    filtered = CHAT.without_calls(response, {"call_DdmO9pD3xa9XTPNJ32zg2hcA", "call_Xr4dQ8pZ1nL0"})
    choice = filtered["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert "tool_calls" not in choice["message"] and choice["message"]["content"] == ""


def test_without_calls_fixes_finish_reason_and_keeps_length() -> None:
    response = load("chat_openai_tools.json")
    response["choices"][0]["finish_reason"] = "stop"
    assert CHAT.without_calls(response, ())["choices"][0]["finish_reason"] == "tool_calls"
    response["choices"][0]["finish_reason"] = "length"
    assert CHAT.without_calls(response, ())["choices"][0]["finish_reason"] == "length"


def test_with_rejections_appends_the_hidden_pair() -> None:
    response = load("chat_openai_tools.json")
    rejections = {"call_DdmO9pD3xa9XTPNJ32zg2hcA": "Blocked: no."}
    reask = CHAT.with_rejections(BODY, response, rejections)
    added = reask["messages"][len(MESSAGES) :]
    assert added[0] == {
        "role": "assistant",
        "content": "I'll list the files first.",
        "tool_calls": response["choices"][0]["message"]["tool_calls"],
    }
    assert added[1:] == [
        {
            "role": "tool",
            "tool_call_id": "call_DdmO9pD3xa9XTPNJ32zg2hcA",
            "content": "Blocked: no.",
        },
        {"role": "tool", "tool_call_id": "call_Xr4dQ8pZ1nL0", "content": SIBLING_NOTE},
    ]
    assert added == CHAT.hidden_items(response, rejections)
    assert reask["messages"][: len(MESSAGES)] == MESSAGES and reask["model"] == "qwen3"
    assert len(BODY["messages"]) == len(MESSAGES)


def test_hidden_items_refuse_unknown_ids_and_call_free_responses() -> None:
    response = load("chat_openai_tools.json")
    with pytest.raises(ValueError, match="call_nope"):
        CHAT.hidden_items(response, {"call_nope": "x"})
    text = CHAT.text_response(CHAT.parse_request(BODY), "hi")
    with pytest.raises(ValueError, match="no tool calls"):
        CHAT.hidden_items(text, {})


def test_splice_inserts_at_a_position_without_touching_the_body() -> None:
    items = [{"role": "assistant", "content": "x"}, {"role": "tool", "content": "y"}]
    spliced = CHAT.splice(BODY, 2, items)
    assert spliced["messages"] == [*MESSAGES[:2], *items, *MESSAGES[2:]]
    assert BODY["messages"] == MESSAGES
    items[0]["content"] = "changed"
    assert spliced["messages"][2]["content"] == "x"
    with pytest.raises(ValueError):
        CHAT.splice(BODY, 5, items)


def test_text_response_is_a_complete_stop_answer() -> None:
    response = CHAT.text_response(RequestInfo("qwen3", False, (), 0, 0, "", ("k",)), "Stopped.")
    assert response["id"].startswith("chatcmpl-") and response["object"] == "chat.completion"
    assert response["model"] == "qwen3" and isinstance(response["created"], int)
    assert response["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Stopped."},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ]
    assert response["usage"] == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


@pytest.mark.parametrize(
    ("status", "kind", "error_type"),
    [
        (400, "invalid_request", "invalid_request_error"),
        (502, "upstream_unavailable", "server_error"),
        (504, "upstream_timeout", "server_error"),
        (429, "rate_limited", "rate_limit_error"),
    ],
)
def test_error_body_uses_the_openai_shape(status: int, kind: str, error_type: str) -> None:
    assert CHAT.error_body(status, "boom", kind=kind) == {
        "error": {"message": "boom", "type": error_type, "param": None, "code": kind}
    }


def test_request_token_fields_asks_vllm_for_ids_and_logprobs() -> None:
    streaming = CHAT.request_token_fields({**BODY, "stream_options": {"x": 1}})
    assert streaming["return_token_ids"] is True and streaming["logprobs"] is True
    assert streaming["stream_options"] == {"x": 1, "include_usage": True}
    plain = CHAT.request_token_fields({"model": "m", "messages": []})
    assert "stream_options" not in plain and plain["return_token_ids"] is True
    assert "return_token_ids" not in BODY


def test_extract_tokens_reads_vllm_fields() -> None:
    capture = CHAT.extract_tokens(load("chat_vllm_tokens.json"))
    assert capture is not None
    assert capture.prompt_token_ids == (151644, 872, 198, 2610, 525)
    assert (
        capture.completion_token_ids[:2] == (23657, 311) and len(capture.completion_token_ids) == 10
    )
    assert capture.logprobs[:3] == (-0.5, -0.25, -0.125) and len(capture.logprobs) == 10
    assert CHAT.extract_tokens(load("chat_openai_tools.json")) is None


def test_strip_token_fields_keeps_only_what_the_client_asked_for() -> None:
    response = load("chat_vllm_tokens.json")
    stripped = CHAT.strip_token_fields(response)
    assert "prompt_token_ids" not in stripped
    assert "token_ids" not in stripped["choices"][0]
    assert stripped["choices"][0]["logprobs"] is None
    assert response["choices"][0]["logprobs"] is not None  # a copy
    asked = CHAT.parse_request({"logprobs": True})
    kept = CHAT.strip_token_fields(response, asked)
    assert kept["choices"][0]["logprobs"] == response["choices"][0]["logprobs"]
    assert "token_ids" not in kept["choices"][0]


def test_calls_only_drops_text_and_reasoning_but_keeps_the_calls() -> None:
    response = load("chat_openai_tools.json")
    response["choices"][0]["message"]["reasoning_content"] = "thinking"
    trimmed = CHAT.calls_only(response)
    message = trimmed["choices"][0]["message"]
    assert message["content"] is None and "reasoning_content" not in message
    assert CHAT.tool_calls(trimmed) == CHAT.tool_calls(response)
    assert response["choices"][0]["message"]["reasoning_content"] == "thinking"  # untouched


def test_rewrite_calls_replaces_by_id_and_restore_puts_the_original_back() -> None:
    response = load("chat_openai_tools.json")
    replacement = ToolCall("call_Xr4dQ8pZ1nL0", "bash", {"command": "cat tests/test_app.py"})
    rewritten, originals = CHAT.rewrite_calls(response, {replacement.id: replacement})
    assert CHAT.tool_calls(rewritten)[1] == replacement
    assert CHAT.tool_calls(rewritten)[0] == CHAT.tool_calls(response)[0]
    assert originals == {replacement.id: response["choices"][0]["message"]["tool_calls"][1]}
    later = {**BODY, "messages": [*MESSAGES, rewritten["choices"][0]["message"]]}
    restored = CHAT.restore_calls(later, len(MESSAGES), originals)
    assert restored["messages"][-1] == response["choices"][0]["message"]
    assert restored["messages"][: len(MESSAGES)] == MESSAGES
    assert CHAT.restore_calls(later, len(MESSAGES) + 1, originals) == later  # before ``at``


def test_history_events_read_calls_and_tool_results() -> None:
    events = [event for item in CHAT.conversation(BODY) for event in CHAT.history_events(item)]
    assert events == [ToolCall("call_0", "bash", {"command": "pytest"}), "1 failed"]
    parts = {"role": "tool", "content": [{"type": "text", "text": "a"}, {"text": "b"}]}
    assert list(CHAT.history_events(parts)) == ["a\nb"]
    assert list(CHAT.history_events({"role": "function", "content": {"rc": 1}})) == ['{"rc": 1}']
    assert list(CHAT.history_events("junk")) == []


def test_system_text_is_the_leading_system_and_developer_messages() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "You are pi."},
            {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "a late reminder"},
        ]
    }
    assert CHAT.system_text(body) == "You are pi.\nBe brief."
    assert CHAT.system_text({"messages": "junk"}) == ""


def test_transcripts_are_the_messages_themselves() -> None:
    assert CHAT.transcript_messages({"messages": [*MESSAGES, "junk"]}) == MESSAGES
    response = load("chat_openai_tools.json")
    assert CHAT.response_messages(response) == [response["choices"][0]["message"]]
    assert CHAT.response_messages({}) == []
    assert CHAT.response_text(response) == "I'll list the files first."
    assert CHAT.response_text(CHAT.calls_only(response)) == ""
