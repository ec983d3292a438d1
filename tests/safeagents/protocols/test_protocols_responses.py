"""OpenAI Responses (codex): request summaries, call items, filtering, re-asks, rendering."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from safeagents._actions import ToolCall
from safeagents.protocols import RESPONSES, SIBLING_NOTE

DATA = Path(__file__).parent / "data"

INPUT: list[dict[str, Any]] = [
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "env"}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it."}]},
    {"type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}', "call_id": "c0"},
    {"type": "function_call_output", "call_id": "c0", "output": "app.py"},
    {
        "type": "custom_tool_call",
        "name": "apply_patch",
        "input": "*** Begin Patch",
        "call_id": "c1",
    },
    {"type": "custom_tool_call_output", "call_id": "c1", "output": "Done!"},
]
BODY: dict[str, Any] = {
    "model": "gpt-5-codex",
    "instructions": "You are Codex.",
    "input": INPUT,
    "tools": [
        {"type": "function", "name": "shell", "parameters": {}},
        {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
        {"type": "local_shell"},
        {"type": "web_search"},
    ],
    "tool_choice": "auto",
    "parallel_tool_calls": True,
    "store": False,
    "stream": True,
    "prompt_cache_key": "conv-1",
}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text())
    return data


def test_parse_request_summarises_the_body() -> None:
    info = RESPONSES.parse_request(BODY)
    assert info.tool_names == ("shell", "apply_patch", "local_shell", "web_search")
    assert (info.model, info.stream, info.message_count, info.tool_result_count) == (
        "gpt-5-codex",
        True,
        6,
        2,
    )
    assert info.first_user_text == "Fix it."


def test_string_input_is_one_user_item() -> None:
    info = RESPONSES.parse_request({"model": "m", "input": "hello"})
    assert (info.message_count, info.first_user_text, info.has_tools) == (1, "hello", False)


def test_conversation_key_ignores_ids_statuses_and_spelling() -> None:
    respelled = [dict(item) for item in INPUT]
    respelled[1] = {"role": "user", "content": "Fix it."}
    respelled[2] = {**INPUT[2], "id": "fc_9", "status": "completed"}
    base = RESPONSES.parse_request(BODY)
    other = RESPONSES.parse_request({"input": respelled})
    assert other.conversation_key(6) == base.conversation_key(6)
    respelled[5] = {**INPUT[5], "output": "Failed"}
    assert RESPONSES.parse_request({"input": respelled}).conversation_key(
        6
    ) != base.conversation_key(6)


def test_tool_calls_cover_function_custom_and_local_shell_items() -> None:
    response = load("responses_codex.json")
    response["output"].append(
        {
            "type": "local_shell_call",
            "id": "lsh_1",
            "call_id": "call_ls",
            "status": "completed",
            "action": {"type": "exec", "command": ["rm", "-rf", "tests"]},
        }
    )
    assert RESPONSES.tool_calls(response) == [
        ToolCall(
            "call_shell_1",
            "shell",
            {"command": ["bash", "-lc", "rm -rf tests"], "workdir": "/repo"},
        ),
        ToolCall(
            "call_patch_2",
            "apply_patch",
            "*** Begin Patch\n*** Update File: app.py\n@@\n-x = 1\n+x = 2\n*** End Patch",
        ),
        ToolCall("call_ls", "local_shell", {"type": "exec", "command": ["rm", "-rf", "tests"]}),
    ]


def test_without_calls_drops_only_the_blocked_items() -> None:
    response = load("responses_codex.json")
    filtered = RESPONSES.without_calls(response, {"call_shell_1"})
    assert [item["type"] for item in filtered["output"]] == [
        "reasoning",
        "message",
        "custom_tool_call",
    ]
    assert filtered["status"] == "completed" and len(response["output"]) == 4


def test_with_rejections_appends_items_and_outputs() -> None:
    response = load("responses_codex.json")
    reask = RESPONSES.with_rejections(BODY, response, {"call_shell_1": "Blocked: tests."})
    added = reask["input"][len(INPUT) :]
    assert [item["type"] for item in added] == [
        "reasoning",
        "message",
        "function_call",
        "custom_tool_call",
        "function_call_output",
        "custom_tool_call_output",
    ]
    assert all("id" not in item for item in added)
    assert (
        added[2]["call_id"] == "call_shell_1"
        and added[2]["arguments"] == response["output"][2]["arguments"]
    )
    assert added[4:] == [
        {"type": "function_call_output", "call_id": "call_shell_1", "output": "Blocked: tests."},
        {"type": "custom_tool_call_output", "call_id": "call_patch_2", "output": SIBLING_NOTE},
    ]
    assert added == RESPONSES.hidden_items(response, {"call_shell_1": "Blocked: tests."})
    assert reask["instructions"] == "You are Codex." and reask["input"][: len(INPUT)] == INPUT


def test_local_shell_calls_are_answered_like_codex_does() -> None:
    response = {
        "output": [
            {"type": "local_shell_call", "id": "l", "call_id": "c", "action": {"type": "exec"}}
        ]
    }
    items = RESPONSES.hidden_items(response, {"c": "no"})
    assert items[-1] == {"type": "function_call_output", "call_id": "c", "output": "no"}


def test_splice_turns_string_input_into_items() -> None:
    spliced = RESPONSES.splice({"model": "m", "input": "hi"}, 1, [{"type": "x"}])
    assert spliced["input"] == [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "x"},
    ]
    with pytest.raises(ValueError):
        RESPONSES.splice(BODY, -1, [])


def test_text_response_is_a_completed_message() -> None:
    response = RESPONSES.text_response(RESPONSES.parse_request(BODY), "Stopped.")
    assert response["id"].startswith("resp_") and response["object"] == "response"
    assert response["status"] == "completed" and response["model"] == "gpt-5-codex"
    [message] = response["output"]
    assert message["id"].startswith("msg_") and message["role"] == "assistant"
    assert message["content"] == [{"type": "output_text", "text": "Stopped.", "annotations": []}]
    assert response["usage"]["total_tokens"] == 0 and RESPONSES.tool_calls(response) == []


def test_error_body_and_token_fields() -> None:
    assert RESPONSES.error_body(502, "down", kind="upstream_unavailable") == {
        "error": {
            "message": "down",
            "type": "server_error",
            "param": None,
            "code": "upstream_unavailable",
        }
    }
    assert RESPONSES.request_token_fields(BODY) == BODY
    assert RESPONSES.extract_tokens(load("responses_codex.json")) is None


def test_calls_only_keeps_only_call_items() -> None:
    response = load("responses_codex.json")
    trimmed = RESPONSES.calls_only(response)
    assert [item["type"] for item in trimmed["output"]] == ["function_call", "custom_tool_call"]
    assert len(response["output"]) == 4  # untouched


def test_rewrite_calls_makes_function_or_local_shell_calls_and_restore_undoes_it() -> None:
    response = load("responses_codex.json")
    patch = ToolCall("call_patch_2", "shell", {"command": ["false"]})
    shell = ToolCall("call_shell_1", "local_shell", {"type": "exec", "command": ["true"]})
    rewritten, originals = RESPONSES.rewrite_calls(response, {c.id: c for c in (patch, shell)})
    assert RESPONSES.tool_calls(rewritten) == [shell, patch]
    assert rewritten["output"][3] == {
        "id": "ctc_01",
        "call_id": "call_patch_2",
        "status": "completed",
        "type": "function_call",
        "name": "shell",
        "arguments": '{"command": ["false"]}',
    }
    assert originals == {
        "call_patch_2": response["output"][3],
        "call_shell_1": response["output"][2],
    }
    # the harness replays the rewritten call without its id, and answers it as a function call
    replayed = {key: value for key, value in rewritten["output"][3].items() if key != "id"}
    output = {"type": "function_call_output", "call_id": "call_patch_2", "output": "no"}
    later = {**BODY, "input": [*INPUT, replayed, output]}
    restored = RESPONSES.restore_calls(later, len(INPUT), originals)
    original = {key: value for key, value in response["output"][3].items() if key != "id"}
    assert restored["input"][len(INPUT) :] == [
        original,
        {**output, "type": "custom_tool_call_output"},
    ]
    assert RESPONSES.restore_calls(later, len(INPUT), {}) == later


def test_history_events_read_call_items_and_their_outputs() -> None:
    events = [e for item in RESPONSES.conversation(BODY) for e in RESPONSES.history_events(item)]
    assert events == [
        ToolCall("c0", "shell", {"command": ["ls"]}),
        "app.py",
        ToolCall("c1", "apply_patch", "*** Begin Patch"),
        "Done!",
    ]
    shell = {"type": "local_shell_call", "call_id": "c2", "action": {"command": ["ls"]}}
    assert list(RESPONSES.history_events(shell)) == [
        ToolCall("c2", "local_shell", {"command": ["ls"]})
    ]
    assert list(RESPONSES.history_events(INPUT[0])) == []


def test_system_text_joins_instructions_and_system_or_developer_items() -> None:
    assert RESPONSES.system_text(BODY) == "You are Codex.\nenv"
    assert RESPONSES.system_text({"input": "hi"}) == ""


def test_transcript_gives_calls_to_the_assistant_message_before_them() -> None:
    response = load("responses_codex.json")
    [message] = RESPONSES.response_messages(response)
    assert (message["role"], message["content"]) == ("assistant", "I'll check the tests.")
    calls = message["tool_calls"]
    assert [(call["id"], call["function"]["name"]) for call in calls] == [
        ("call_shell_1", "shell"),
        ("call_patch_2", "apply_patch"),
    ]
    assert calls[1]["function"]["arguments"].startswith("*** Begin Patch")
    transcript = RESPONSES.transcript_messages(BODY)
    assert [message["role"] for message in transcript] == [
        "system",
        "developer",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert transcript[0]["content"] == "You are Codex." and transcript[4]["content"] == "app.py"
    assert RESPONSES.response_text(response) == "I'll check the tests."
