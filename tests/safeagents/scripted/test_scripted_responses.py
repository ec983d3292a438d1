import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from safeagents.scripted import Script, ScriptedServer, parse_sse

SCRIPT = Script.from_data(
    [
        {"shell": "python -m pytest -q"},
        {"say": "Patching.", "write": {"path": "calc.py", "content": "ok = True\n"}},
        {"say": "Fixed."},
    ]
)
TOOLS = [
    {
        "type": "function",
        "name": "shell",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "array", "items": {"type": "string"}}},
            "required": ["command"],
        },
    },
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
    {"type": "web_search"},
]
PATCH = "*** Begin Patch\n*** Add File: calc.py\n+ok = True\n*** End Patch\n"


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(SCRIPT) as running:
        yield running


def body(results: int, stream: bool) -> dict[str, Any]:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix"}]}
    ]
    for index in range(results):
        items.append(
            {"type": "function_call", "call_id": f"c{index}", "name": "shell", "arguments": "{}"}
        )
        items.append({"type": "function_call_output", "call_id": f"c{index}", "output": "out"})
    return {"model": "m", "input": items, "tools": TOOLS, "stream": stream, "store": False}


@pytest.fixture
def url(server: ScriptedServer) -> str:
    return server.base_url


def events(url: str, results: int) -> list[dict[str, Any]]:
    response = httpx.post(f"{url}/responses", json=body(results, True))
    parsed = []
    for name, data in parse_sse(response.text):
        event = json.loads(data)
        assert event["type"] == name
        parsed.append(event)
    assert [event["sequence_number"] for event in parsed] == list(range(len(parsed)))
    return parsed


def test_json_reply_is_a_completed_response_with_a_function_call(url: str) -> None:
    reply = httpx.post(f"{url}/responses", json=body(0, False)).json()
    assert (reply["object"], reply["status"], reply["model"]) == ("response", "completed", "m")
    (item,) = reply["output"]
    assert (item["type"], item["name"], item["call_id"]) == ("function_call", "shell", "call_s0_0")
    assert json.loads(item["arguments"]) == {"command": ["bash", "-lc", "python -m pytest -q"]}
    usage = reply["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_function_call_stream_event_sequence(url: str) -> None:
    stream = events(url, 0)
    kinds = [event["type"] for event in stream]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-2:] == ["response.output_item.done", "response.completed"]
    deltas = [e["delta"] for e in stream if e["type"] == "response.function_call_arguments.delta"]
    done = next(e for e in stream if e["type"] == "response.function_call_arguments.done")
    assert len(deltas) > 1
    assert "".join(deltas) == done["arguments"]
    added = stream[2]["item"]
    assert (added["status"], added["arguments"]) == ("in_progress", "")
    final = stream[-1]["response"]
    assert final["status"] == "completed"
    assert final["output"][0]["arguments"] == done["arguments"]


def test_text_and_custom_tool_call_stream(url: str) -> None:
    stream = events(url, 1)
    text = "".join(e["delta"] for e in stream if e["type"] == "response.output_text.delta")
    patch = "".join(
        e["delta"] for e in stream if e["type"] == "response.custom_tool_call_input.delta"
    )
    assert (text, patch) == ("Patching.", PATCH)
    message, call = stream[-1]["response"]["output"]
    assert message["content"][0] == {"type": "output_text", "text": "Patching.", "annotations": []}
    assert (call["type"], call["name"], call["input"]) == ("custom_tool_call", "apply_patch", PATCH)
    done = [e["output_index"] for e in stream if e["type"] == "response.output_item.done"]
    assert done == [0, 1]


def test_final_answer_has_only_a_message(url: str) -> None:
    final = events(url, 2)[-1]["response"]
    assert [item["type"] for item in final["output"]] == ["message"]
    assert final["output"][0]["content"][0]["text"] == "Fixed."


def test_custom_tool_outputs_count_as_results(url: str) -> None:
    request = body(1, False)
    request["input"].append({"type": "custom_tool_call_output", "call_id": "p", "output": "done"})
    reply = httpx.post(f"{url}/responses", json=request).json()
    assert reply["output"][0]["content"][0]["text"] == "Fixed."


def test_openai_sdk_reads_the_stream(url: str) -> None:
    openai = pytest.importorskip("openai")
    request = body(1, False)
    with (
        openai.OpenAI(base_url=url, api_key="k", max_retries=0) as client,
        client.responses.stream(model="m", input=request["input"], tools=TOOLS) as stream,
    ):
        kinds = {event.type for event in stream}
        final = stream.get_final_response()
    assert "response.custom_tool_call_input.delta" in kinds
    assert [item.type for item in final.output] == ["message", "custom_tool_call"]
    assert final.output_text == "Patching."
