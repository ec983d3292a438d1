import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from safeagents.scripted import Script, ScriptedServer, parse_sse

SCRIPT = Script.from_data(
    [
        {"shell": "python -m pytest -q", "say": "Running the tests first."},
        {"parallel": [{"shell": "ls"}, {"write": {"path": "a.py", "content": "x = 1\n"}}]},
        {"say": "All done, the tests pass now."},
    ]
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {key: {"type": "string"} for key in keys},
                "required": list(keys),
            },
        },
    }
    for name, keys in (("bash", ("command",)), ("write", ("path", "content")))
]


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(SCRIPT) as running:
        yield running


def body(results: int, stream: bool, **extra: Any) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix it"}]
    for index in range(results):
        call = {
            "id": f"c{index}",
            "type": "function",
            "function": {"name": "bash", "arguments": "{}"},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{index}", "content": f"out {index}"})
    return {"model": "m", "messages": messages, "tools": TOOLS, "stream": stream, **extra}


def assemble(stream_text: str) -> dict[str, Any]:
    """Rebuild a message from chat.completion.chunk deltas, as OpenAI clients do."""
    events = parse_sse(stream_text)
    assert events[-1] == (None, "[DONE]")
    text, finish, usage = "", None, None
    calls: dict[int, dict[str, Any]] = {}
    for _, data in events[:-1]:
        chunk = json.loads(data)
        assert chunk["object"] == "chat.completion.chunk"
        usage = chunk.get("usage") or usage
        for choice in chunk["choices"]:
            delta = choice["delta"]
            text += delta.get("content") or ""
            for fragment in delta.get("tool_calls", []):
                call = calls.setdefault(fragment["index"], {"arguments": "", "chunks": 0})
                call.update({k: v for k, v in fragment.items() if k in ("id", "type")})
                call.setdefault("name", fragment.get("function", {}).get("name"))
                call["arguments"] += fragment.get("function", {}).get("arguments", "")
                call["chunks"] += 1
            finish = choice["finish_reason"] or finish
    return {
        "text": text,
        "calls": [calls[i] for i in sorted(calls)],
        "finish": finish,
        "usage": usage,
    }


def test_json_reply_carries_the_tool_call_and_finish_reason(server: ScriptedServer) -> None:
    reply = httpx.post(f"{server.base_url}/chat/completions", json=body(0, False)).json()
    (choice,) = reply["choices"]
    assert reply["object"] == "chat.completion"
    assert reply["model"] == "m"
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Running the tests first."
    (call,) = choice["message"]["tool_calls"]
    assert call["id"] == "call_s0_0"
    assert call["function"]["name"] == "bash"
    assert json.loads(call["function"]["arguments"]) == {"command": "python -m pytest -q"}
    assert reply["usage"]["total_tokens"] == (
        reply["usage"]["prompt_tokens"] + reply["usage"]["completion_tokens"]
    )


def test_stream_splits_arguments_over_several_chunks(server: ScriptedServer) -> None:
    response = httpx.post(
        f"{server.base_url}/chat/completions",
        json=body(1, True, stream_options={"include_usage": True}),
    )
    assert response.headers["content-type"].startswith("text/event-stream")
    message = assemble(response.text)
    assert message["finish"] == "tool_calls"
    assert message["usage"]["completion_tokens"] > 0
    first, second = message["calls"]
    assert (first["id"], first["name"], second["id"], second["name"]) == (
        "call_s1_0",
        "bash",
        "call_s1_1",
        "write",
    )
    assert first["chunks"] > 2
    assert json.loads(first["arguments"]) == {"command": "ls"}
    assert json.loads(second["arguments"]) == {"path": "a.py", "content": "x = 1\n"}


def test_stream_final_answer_and_no_usage_unless_asked(server: ScriptedServer) -> None:
    message = assemble(httpx.post(f"{server.base_url}/chat/completions", json=body(3, True)).text)
    assert message == {
        "text": "All done, the tests pass now.",
        "calls": [],
        "finish": "stop",
        "usage": None,
    }


def test_requests_without_tools_get_a_side_reply(server: ScriptedServer) -> None:
    request = body(1, False)
    del request["tools"]
    reply = httpx.post(f"{server.base_url}/chat/completions", json=request).json()
    assert reply["choices"][0]["message"] == {"role": "assistant", "content": SCRIPT.side_text}
    assert reply["choices"][0]["finish_reason"] == "stop"


def test_openai_sdk_parses_stream_and_json(server: ScriptedServer) -> None:
    openai = pytest.importorskip("openai")
    with openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as client:
        check_with_client(client)


def check_with_client(client: Any) -> None:
    request = body(0, False)
    completion = client.chat.completions.create(
        model="m", messages=request["messages"], tools=request["tools"]
    )
    (call,) = completion.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == {"command": "python -m pytest -q"}
    arguments: dict[int, str] = {}
    finish = None
    with client.chat.completions.create(
        model="m", messages=body(1, False)["messages"], tools=request["tools"], stream=True
    ) as stream:
        for chunk in stream:
            for fragment in chunk.choices[0].delta.tool_calls or []:
                arguments[fragment.index] = arguments.get(fragment.index, "") + (
                    fragment.function.arguments or ""
                )
            finish = chunk.choices[0].finish_reason or finish
    assert finish == "tool_calls"
    assert [json.loads(arguments[i]) for i in sorted(arguments)] == [
        {"command": "ls"},
        {"path": "a.py", "content": "x = 1\n"},
    ]


def test_a_thinking_step_answers_with_reasoning_before_its_text() -> None:
    script = Script.from_data([{"think": "Look first.", "say": "Looking.", "shell": "ls"}])
    chat = {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": TOOLS}
    with ScriptedServer(script) as scripted:
        whole = httpx.post(f"{scripted.base_url}/chat/completions", json=chat).json()
        streamed = httpx.post(
            f"{scripted.base_url}/chat/completions", json={**chat, "stream": True}
        ).text
    assert whole["choices"][0]["message"]["reasoning"] == "Look first."
    deltas = [
        choice["delta"]
        for _, data in parse_sse(streamed)[:-1]
        for choice in json.loads(data)["choices"]
    ]
    reasoning = "".join(delta.get("reasoning") or "" for delta in deltas)
    assert reasoning == "Look first."
    first_text = next(i for i, d in enumerate(deltas) if d.get("content"))
    assert all(not d.get("reasoning") for d in deltas[first_text:])


def test_a_text_mode_script_writes_its_commands_as_fenced_blocks() -> None:
    script = Script.from_data(
        {
            "text_mode": True,
            "steps": [
                {"say": "THOUGHT: look.", "shell": "ls"},
                {"write": {"path": "a b.py", "content": "x = 1"}},
                {"parallel": [{"shell": "ls"}, {"shell": "pwd"}]},
            ],
        }
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix it"}]
    with ScriptedServer(script) as running:
        replies = []
        for _ in range(4):
            request = {"model": "m", "messages": messages}
            reply = httpx.post(f"{running.base_url}/chat/completions", json=request).json()
            replies.append(reply["choices"][0]["message"]["content"])
            messages += [
                {"role": "assistant", "content": replies[-1]},
                {"role": "user", "content": "<returncode>0</returncode>"},
            ]
    assert replies == [
        "THOUGHT: look.\n\n```bash\nls\n```",
        "```bash\ncat > 'a b.py' <<'SCRIPTED_EOF'\nx = 1\nSCRIPTED_EOF\n```",
        "```bash\nls\n```\n\n```bash\npwd\n```",
        script.finished_text,
    ]
