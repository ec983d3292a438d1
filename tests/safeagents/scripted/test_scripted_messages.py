import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from safeagents.scripted import Script, ScriptedServer, parse_sse

SCRIPT = Script.from_data(
    [
        {"say": "Let me check.", "shell": "pytest -q"},
        {"write": {"path": "/w/calc.py", "content": "ok = 1\n"}},
        {"say": "Done."},
    ]
)
TOOLS = [
    {
        "name": "Bash",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
            "required": ["command"],
        },
    },
    {
        "name": "Write",
        "input_schema": {
            "type": "object",
            "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["file_path", "content"],
        },
    },
]


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(SCRIPT) as running:
        yield running


@pytest.fixture
def url(server: ScriptedServer) -> str:
    return server.url


def body(results: int, stream: bool) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix"}]
    for index in range(results):
        use = {"type": "tool_use", "id": f"t{index}", "name": "Bash", "input": {}}
        result = {"type": "tool_result", "tool_use_id": f"t{index}", "content": "out"}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    return {"model": "m", "max_tokens": 100, "messages": messages, "tools": TOOLS, "stream": stream}


def test_json_reply_has_text_and_tool_use_blocks(url: str) -> None:
    reply = httpx.post(f"{url}/v1/messages", json=body(0, False)).json()
    assert (reply["type"], reply["role"], reply["stop_reason"]) == (
        "message",
        "assistant",
        "tool_use",
    )
    assert reply["content"] == [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_s0_0", "name": "Bash", "input": {"command": "pytest -q"}},
    ]


def test_stream_events_rebuild_the_message(url: str) -> None:
    response = httpx.post(f"{url}/v1/messages", json=body(1, True))
    events = [(name, json.loads(data)) for name, data in parse_sse(response.text)]
    assert all(name == event["type"] for name, event in events)
    kinds = [name for name, _ in events]
    assert kinds[:2] == ["message_start", "ping"]
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert events[0][1]["message"]["stop_reason"] is None
    partial = [
        event["delta"]["partial_json"]
        for name, event in events
        if name == "content_block_delta" and event["delta"]["type"] == "input_json_delta"
    ]
    assert len(partial) > 1
    assert json.loads("".join(partial)) == {"file_path": "/w/calc.py", "content": "ok = 1\n"}
    start = next(event for name, event in events if name == "content_block_start")
    assert start["content_block"] == {
        "type": "tool_use",
        "id": "toolu_s1_0",
        "name": "Write",
        "input": {},
    }
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_tool_results_inside_user_messages_advance_the_script(url: str) -> None:
    reply = httpx.post(f"{url}/v1/messages", json=body(2, False)).json()
    assert (reply["stop_reason"], reply["content"]) == (
        "end_turn",
        [{"type": "text", "text": "Done."}],
    )


def test_count_tokens_and_error_shape(url: str) -> None:
    counted = httpx.post(f"{url}/v1/messages/count_tokens", json=body(2, False)).json()
    assert counted["input_tokens"] > 0
    bad = httpx.post(f"{url}/v1/messages", content=b"[1, 2]")
    assert bad.status_code == 400
    assert bad.json()["type"] == "error"


def test_anthropic_sdk_parses_the_stream(url: str) -> None:
    anthropic = pytest.importorskip("anthropic")
    request = body(0, False)
    with (
        anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client,
        client.messages.stream(
            model="m", max_tokens=100, messages=request["messages"], tools=TOOLS
        ) as stream,
    ):
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Let me check."
    assert final.stop_reason == "tool_use"
    assert final.content[1].input == {"command": "pytest -q"}
