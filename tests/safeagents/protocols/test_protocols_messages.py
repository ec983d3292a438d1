"""Anthropic Messages (claude-code): request summaries, tool_use, filtering, re-asks, rendering."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from safeagents._actions import ToolCall
from safeagents.protocols import MESSAGES, SIBLING_NOTE

DATA = Path(__file__).parent / "data"

CONVERSATION: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
            {"type": "text", "text": "Make the tests pass."},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Running them."},
            {"type": "tool_use", "id": "toolu_0", "name": "Bash", "input": {"command": "pytest"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_0",
                "content": "1 failed",
                "cache_control": {"type": "ephemeral"},
            }
        ],
    },
]
BODY: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 32000,
    "system": [{"type": "text", "text": "You are Claude Code."}],
    "messages": CONVERSATION,
    "tools": [
        {"name": "Bash", "input_schema": {"type": "object"}},
        {"name": "Read", "input_schema": {"type": "object"}},
        {"type": "web_search_20250305", "name": "web_search"},
    ],
    "metadata": {"user_id": "session_abc"},
    "stream": True,
}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text())
    return data


def test_parse_request_summarises_the_body() -> None:
    info = MESSAGES.parse_request(BODY)
    assert info.tool_names == ("Bash", "Read", "web_search")
    assert (info.message_count, info.tool_result_count, info.stream) == (3, 1, True)
    assert info.first_user_text == "<system-reminder>ctx</system-reminder>\nMake the tests pass."


def test_conversation_key_ignores_moving_cache_hints_and_string_content() -> None:
    moved = json.loads(json.dumps(CONVERSATION))
    del moved[2]["content"][0]["cache_control"]
    moved[0]["content"][1]["cache_control"] = {"type": "ephemeral"}
    base = MESSAGES.parse_request(BODY)
    assert MESSAGES.parse_request({"messages": moved}).conversation_key(3) == base.conversation_key(
        3
    )
    simple = MESSAGES.parse_request({"messages": [{"role": "user", "content": "hi"}]})
    blocks = MESSAGES.parse_request(
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    )
    assert simple.conversation_key(1) == blocks.conversation_key(1)


def test_tool_calls_read_tool_use_blocks() -> None:
    assert MESSAGES.tool_calls(load("messages_claude.json")) == [
        ToolCall(
            "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "Bash",
            {"command": "rm tests/test_app.py", "description": "Remove test"},
        ),
        ToolCall("toolu_02ReadAbc", "Read", {"file_path": "/repo/app.py"}),
    ]


def test_without_calls_keeps_stop_reason_consistent() -> None:
    response = load("messages_claude.json")
    one = MESSAGES.without_calls(response, {"toolu_01T1x1fJ34qAmk2tNTrN7Up6"})
    assert [block["type"] for block in one["content"]] == ["thinking", "text", "tool_use"]
    assert one["stop_reason"] == "tool_use"
    none = MESSAGES.without_calls(response, {"toolu_01T1x1fJ34qAmk2tNTrN7Up6", "toolu_02ReadAbc"})
    assert [block["type"] for block in none["content"]] == ["thinking", "text"]
    assert none["stop_reason"] == "end_turn"
    assert len(response["content"]) == 4


def test_with_rejections_appends_assistant_and_tool_results() -> None:
    response = load("messages_claude.json")
    response["content"].insert(2, {"type": "text", "text": ""})
    rejections = {"toolu_01T1x1fJ34qAmk2tNTrN7Up6": "Blocked: tests are protected."}
    reask = MESSAGES.with_rejections(BODY, response, rejections)
    assistant, results = reask["messages"][3:]
    assert assistant == {
        "role": "assistant",
        "content": [
            block for block in response["content"] if block != {"type": "text", "text": ""}
        ],
    }
    assert results == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "content": "Blocked: tests are protected.",
                "is_error": True,
            },
            {"type": "tool_result", "tool_use_id": "toolu_02ReadAbc", "content": SIBLING_NOTE},
        ],
    }
    assert reask["system"] == BODY["system"] and reask["messages"][:3] == CONVERSATION
    with pytest.raises(ValueError, match="toolu_x"):
        MESSAGES.hidden_items(response, {"toolu_x": "no"})


def test_splice_keeps_alternation_when_inserting_a_pair() -> None:
    pair = MESSAGES.hidden_items(load("messages_claude.json"), {"toolu_02ReadAbc": "no"})
    spliced = MESSAGES.splice(BODY, 3, pair)
    roles = [message["role"] for message in spliced["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]


def test_text_response_is_an_end_turn_message() -> None:
    response = MESSAGES.text_response(MESSAGES.parse_request(BODY), "Stopped.")
    assert response["id"].startswith("msg_") and response["type"] == "message"
    assert response["content"] == [{"type": "text", "text": "Stopped."}]
    assert (response["stop_reason"], response["stop_sequence"]) == ("end_turn", None)
    assert response["usage"]["input_tokens"] == 0 and response["usage"]["output_tokens"] == 0
    assert response["model"] == "claude-sonnet-4-5"


@pytest.mark.parametrize(
    ("status", "kind", "error_type"),
    [
        (400, "invalid_request", "invalid_request_error"),
        (502, "upstream_unavailable", "api_error"),
        (504, "upstream_timeout", "timeout_error"),
        (529, "upstream_unavailable", "overloaded_error"),
    ],
)
def test_error_body_uses_the_anthropic_shape(status: int, kind: str, error_type: str) -> None:
    assert MESSAGES.error_body(status, "boom", kind=kind) == {
        "type": "error",
        "error": {"type": error_type, "message": "boom"},
    }


def test_calls_only_keeps_only_tool_use_blocks() -> None:
    response = load("messages_claude.json")
    trimmed = MESSAGES.calls_only(response)
    assert {block["type"] for block in trimmed["content"]} == {"tool_use"}
    assert MESSAGES.tool_calls(trimmed) == MESSAGES.tool_calls(response)
    assert MESSAGES.calls_only({"content": "just text"})["content"] == []


def test_rewrite_calls_replaces_tool_use_blocks_and_restore_undoes_it() -> None:
    response = load("messages_claude.json")
    replacement = ToolCall("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "Bash", {"command": "exit 1"})
    rewritten, originals = MESSAGES.rewrite_calls(response, {replacement.id: replacement})
    assert MESSAGES.tool_calls(rewritten)[0] == replacement
    assert rewritten["content"][2]["id"] == replacement.id
    assert originals == {replacement.id: response["content"][2]}
    assistant = {"role": "assistant", "content": rewritten["content"]}
    later = {**BODY, "messages": [*CONVERSATION, assistant]}
    restored = MESSAGES.restore_calls(later, len(CONVERSATION), originals)
    assert restored["messages"][-1] == {"role": "assistant", "content": response["content"]}
    user = {"role": "user", "content": rewritten["content"]}  # only assistant turns are restored
    untouched = {**BODY, "messages": [*CONVERSATION, user]}
    assert MESSAGES.restore_calls(untouched, 0, originals) == untouched


def test_history_events_read_tool_use_and_tool_result_blocks() -> None:
    events = [e for item in MESSAGES.conversation(BODY) for e in MESSAGES.history_events(item)]
    assert events == [ToolCall("toolu_0", "Bash", {"command": "pytest"}), "1 failed"]
    parts = [{"type": "text", "text": "a"}, {"type": "image"}]
    result = {"role": "user", "content": [{"type": "tool_result", "content": parts}]}
    assert list(MESSAGES.history_events(result)) == ["a\n"]
    assert list(MESSAGES.history_events({"role": "user", "content": "hi"})) == []


def test_system_text_reads_string_or_block_system() -> None:
    assert MESSAGES.system_text(BODY) == "You are Claude Code."
    assert MESSAGES.system_text({"system": "plain"}) == "plain"
    assert MESSAGES.system_text({}) == ""


def test_transcript_turns_blocks_into_chat_messages() -> None:
    transcript = MESSAGES.transcript_messages(BODY)
    assert transcript[0] == {"role": "system", "content": "You are Claude Code."}
    assert transcript[1]["content"] == (
        "<system-reminder>ctx</system-reminder>\nMake the tests pass."
    )
    assert transcript[2]["tool_calls"][0]["function"] == {
        "name": "Bash",
        "arguments": '{"command": "pytest"}',
    }
    assert transcript[3] == {"role": "tool", "tool_call_id": "toolu_0", "content": "1 failed"}
    response = load("messages_claude.json")
    [answer] = MESSAGES.response_messages(response)
    assert answer["content"] == "Let me look at the failing test."
    assert [call["id"] for call in answer["tool_calls"]] == [
        "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        "toolu_02ReadAbc",
    ]
    assert MESSAGES.response_text(response) == "Let me look at the failing test."
    assert MESSAGES.response_text(MESSAGES.calls_only(response)) == ""
