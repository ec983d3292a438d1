import gzip
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from safeagents.scripted import Script, ScriptedServer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(Script.from_data([{"shell": "ls"}, {"say": "ok"}])) as running:
        yield running


def chat(url: str, results: int = 0, **extra: Any) -> httpx.Response:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    messages += [{"role": "tool", "tool_call_id": "c", "content": "r"}] * results
    body = {"model": "m", "messages": messages, "tools": TOOLS, **extra}
    return httpx.post(f"{url}/chat/completions", json=body, headers={"x-session-affinity": "abc"})


def test_records_every_request_with_headers_and_reply(server: ScriptedServer) -> None:
    chat(server.base_url)
    httpx.post(f"{server.url}/api/show", json={"name": "m"})
    first, probe = server.requests
    assert (first.method, first.path, first.status, first.dialect) == (
        "POST",
        "/v1/chat/completions",
        200,
        "chat",
    )
    assert first.headers["x-session-affinity"] == "abc"
    assert first.body["model"] == "m"
    assert (first.tool_names, first.tool_results, first.stream) == (("bash",), 0, False)
    assert first.reply == {
        "step": 0,
        "text": None,
        "calls": [{"id": "s0_0", "name": "bash", "arguments": {"command": "ls"}}],
    }
    assert (probe.path, probe.status, probe.dialect) == ("/api/show", 404, None)
    assert server.model.model_requests() == [first]
    assert server.model.model_requests("responses") == []


def test_requests_endpoint_lists_and_clears(server: ScriptedServer) -> None:
    chat(server.base_url, results=1)
    listed = httpx.get(f"{server.url}/_scripted/requests").json()
    assert [(item["path"], item["tool_results"]) for item in listed] == [
        ("/v1/chat/completions", 1)
    ]
    assert listed[0]["reply"]["text"] == "ok"
    assert httpx.delete(f"{server.url}/_scripted/requests").json() == {"cleared": True}
    assert server.requests == []


def test_tool_outputs_are_read_back_per_dialect(server: ScriptedServer) -> None:
    chat(server.base_url, results=2)
    assert server.requests[0].tool_outputs() == ["r", "r"]


def test_script_can_be_replaced_at_run_time(server: ScriptedServer) -> None:
    assert httpx.put(f"{server.url}/_scripted/script", json=[{"say": "new"}]).json() == {"steps": 1}
    assert chat(server.base_url).json()["choices"][0]["message"]["content"] == "new"
    bad = httpx.put(f"{server.url}/_scripted/script", json=[{"nope": 1}])
    assert bad.status_code == 400
    assert "expected one of" in bad.json()["error"]["message"]


def test_any_path_prefix_reaches_the_model(server: ScriptedServer) -> None:
    response = httpx.post(
        f"{server.url}/s/session-7/v1/chat/completions",
        json={"model": "m", "messages": [], "tools": TOOLS},
    )
    assert response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "bash"
    assert server.requests[-1].path == "/s/session-7/v1/chat/completions"


def test_models_and_probes(server: ScriptedServer) -> None:
    listing = httpx.get(f"{server.base_url}/models").json()
    assert [model["id"] for model in listing["data"]] == ["scripted"]
    assert listing["data"][0]["context_length"] > 0
    assert httpx.get(f"{server.base_url}/models/org/name").json()["id"] == "org/name"
    for path in ("/api/show", "/api/tags", "/api/v1/models", "/v1/nothing"):
        assert httpx.get(f"{server.url}{path}").status_code == 404


def test_unrenderable_step_and_bad_bodies_are_client_errors(server: ScriptedServer) -> None:
    only_read = [{"type": "function", "function": {"name": "read", "parameters": {}}}]
    response = httpx.post(
        f"{server.base_url}/chat/completions",
        json={"model": "m", "messages": [], "tools": only_read},
    )
    assert response.status_code == 400
    assert "no shell tool" in response.json()["error"]["message"]
    assert server.requests[-1].status == 400
    assert httpx.post(f"{server.base_url}/chat/completions", content=b"{oops").status_code == 400


def test_tool_choice_none_gets_a_side_reply(server: ScriptedServer) -> None:
    reply = chat(server.base_url, tool_choice="none").json()
    assert reply["choices"][0]["message"]["content"] == server.model.script.side_text


def test_event_delay_paces_the_stream() -> None:
    script = Script.from_data([{"say": "one two three four"}])
    with ScriptedServer(script, event_delay=0.05) as server:
        started = time.monotonic()
        arrivals = []
        with httpx.stream(
            "POST",
            f"{server.base_url}/chat/completions",
            json={"model": "m", "messages": [], "tools": TOOLS, "stream": True},
        ) as r:
            for line in r.iter_lines():
                if line.startswith("data:"):
                    arrivals.append(time.monotonic() - started)
    assert len(arrivals) >= 5
    assert arrivals[-1] - arrivals[0] >= 0.05 * (len(arrivals) - 2)


def test_reply_delay_holds_every_model_answer_streamed_or_not() -> None:
    script = Script.from_data([{"say": "one"}])
    with ScriptedServer(script, reply_delay=0.3) as server:
        for stream in (False, True):
            started = time.monotonic()
            body = {"model": "m", "messages": [], "tools": TOOLS, "stream": stream}
            with httpx.stream("POST", f"{server.base_url}/chat/completions", json=body) as r:
                first = next(r.iter_bytes())
            assert first and time.monotonic() - started >= 0.3, stream
        started = time.monotonic()
        assert httpx.get(f"{server.base_url}/models").status_code == 200
        assert time.monotonic() - started < 0.3  # only model answers wait


def test_gzip_request_bodies_are_read(server: ScriptedServer) -> None:
    body = json.dumps({"model": "m", "messages": [], "tools": TOOLS}).encode()
    response = httpx.post(
        f"{server.base_url}/chat/completions",
        content=gzip.compress(body),
        headers={"content-encoding": "gzip", "content-type": "application/json"},
    )
    assert response.json()["choices"][0]["finish_reason"] == "tool_calls"
    assert server.requests[-1].body["model"] == "m"
