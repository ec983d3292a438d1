"""Transcripts in OpenAI chat shape: what ``sessions export`` writes for ``check``."""

from __future__ import annotations

import json

from safeagents.store import FindingRecord, SessionRecord, TurnRecord, to_chat_messages
from safeagents.store._transcript import export_line


def test_anthropic_messages_become_chat_messages() -> None:
    body = {
        "system": [{"type": "text", "text": "be careful"}],
        "messages": [
            {"role": "user", "content": "fix it"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "a.py"}],
                    }
                ],
            },
        ],
    }
    assert to_chat_messages("messages", body) == [
        {"role": "system", "content": "be careful"},
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {
                    "id": "t1",
                    "type": "function",
                    "function": {"name": "Bash", "arguments": '{"command": "ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "a.py"},
    ]


def test_responses_items_become_chat_messages() -> None:
    body = {
        "instructions": "codex rules",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
            {"type": "reasoning", "summary": []},
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "shell_command",
                "arguments": '{"command":"ls"}',
            },
            {
                "type": "custom_tool_call",
                "call_id": "c2",
                "name": "apply_patch",
                "input": "*** Begin Patch",
            },
            {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
            {"type": "custom_tool_call_output", "call_id": "c2", "output": "done"},
        ],
    }
    messages = to_chat_messages("responses", body)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    calls = messages[2]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["shell_command", "apply_patch"]
    assert calls[1]["function"]["arguments"] == "*** Begin Patch"
    assert to_chat_messages("responses", {"input": "hi"}) == [{"role": "user", "content": "hi"}]


def test_export_keeps_withheld_calls_with_their_rejections_and_the_final_answer() -> None:
    blocked_call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    response = {
        "choices": [
            {"message": {"role": "assistant", "content": None, "tool_calls": [blocked_call]}}
        ]
    }
    final = {"choices": [{"message": {"role": "assistant", "content": "ended by safeagents"}}]}
    finding = FindingRecord("r", "c", "high", "reject", "c1", "bash", "delete x", "no!", True)
    turn = TurnRecord(
        session_id="s",
        exchange="e",
        attempt=0,
        kind="main",
        status="ok",
        dialect="chat",
        harness="pi",
        model="m",
        stream=False,
        request={"messages": [{"role": "user", "content": "task"}]},
        response=response,
        delivered=final,
        findings=(finding,),
    )
    side = TurnRecord(
        **{**_fields(turn), "exchange": "side", "kind": "side", "request": {"messages": []}}
    )
    session = SessionRecord(id="s", harness="pi", hacked=True, tool_calls=1, findings=(finding,))
    line = export_line(session, [turn, side])
    assert [m["role"] for m in line["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert line["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "no!"}
    assert line["messages"][3]["content"] == "ended by safeagents"
    assert json.loads(json.dumps(line))["findings"][0]["rule_id"] == "r"


def _fields(turn: TurnRecord) -> dict[str, object]:
    return {name: getattr(turn, name) for name in TurnRecord.__dataclass_fields__}
