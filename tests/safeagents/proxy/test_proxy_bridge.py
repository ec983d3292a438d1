"""Responses and Messages harnesses served from a Chat Completions upstream (token capture),
and a training session's sampling parameters enforced on whatever dialect it speaks."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from proxy_testkit import (
    BLOCKED,
    PATHS,
    FakeUpstream,
    StartProxy,
    commands,
    decode,
    first_body,
    follow_up,
    http,
    script,
    serve_process,
    session_json,
    tool_results,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from safeagents.protocols import TOKENS_KEY, encode_json, parse_events
from safeagents.scripted import ScriptedServer

SAMPLING = {"temperature": 0.8, "top_p": 1.0, "top_k": 0, "max_tokens": 512, "thinking": True}


def _open(proxy_url: str, sid: str, body: dict[str, object]) -> int:
    response = http.put(f"{proxy_url}/safeagents/v1/sessions/{sid}", json=body)
    return response.status_code


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("dialect", ["responses", "messages"])
def test_a_non_chat_harness_is_served_from_chat_with_tokens_captured(
    dialect: str, stream: bool, sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}))
    proxy = start_proxy(scripted.base_url, capture_tokens=True)
    body = first_body(dialect, stream=stream)
    response = http.post(proxy.session_url(sid) + PATHS[dialect], json=body)
    assert response.status_code == 200, response.text
    streamed = "text/event-stream" in response.headers.get("content-type", "")
    assert streamed == stream
    assert TOKENS_KEY not in response.text and "token_ids" not in response.text
    answer = decode(dialect, response)
    assert commands(dialect, answer) == ["ls"]  # the blocked call was re-asked away
    upstream = scripted.model.model_requests()
    assert [request.dialect for request in upstream] == ["chat", "chat"]
    assert all(request.body["return_token_ids"] is True for request in upstream)
    assert upstream[0].stream == stream and not upstream[1].stream
    # the re-ask carries the rejection as a chat tool result
    assert "Blocked by safeagents" in upstream[1].tool_outputs()[0]
    turns = session_json(proxy.url, sid)["turns"]
    assert [(t["kind"], t["dialect"]) for t in turns] == [("main", dialect), ("reask", dialect)]
    for turn in turns:
        tokens = turn["tokens"]
        assert tokens["prompt_token_ids"] and tokens["completion_token_ids"]
        assert len(tokens["logprobs"]) == len(tokens["completion_token_ids"])
        assert "sampling" not in tokens  # not a training session


@pytest.mark.parametrize("dialect", ["responses", "messages"])
def test_a_translated_conversation_goes_on_with_its_tool_results(
    dialect: str, sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": "ls"}, {"say": "done"}))
    proxy = start_proxy(scripted.base_url, capture_tokens=True)
    body = first_body(dialect, stream=True)
    answer = decode(dialect, http.post(proxy.session_url(sid) + PATHS[dialect], json=body))
    second = follow_up(dialect, body, answer, ["a.py b.py"])
    final = decode(dialect, http.post(proxy.session_url(sid) + PATHS[dialect], json=second))
    assert commands(dialect, final) == []
    assert tool_results(dialect, second) == ["a.py b.py"]
    last = scripted.model.model_requests()[-1]
    assert last.dialect == "chat" and last.tool_outputs() == ["a.py b.py"]
    roles = [message["role"] for message in last.body["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]


@pytest.mark.parametrize("dialect", ["chat", "responses", "messages"])
def test_a_training_session_samples_with_the_run_s_parameters(
    dialect: str, sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}))
    proxy = start_proxy(scripted.base_url, capture_tokens=True)
    assert _open(proxy.url, sid, {"sampling": SAMPLING}) == 200
    body = {**first_body(dialect), "temperature": 0.1, "top_p": 0.5, "top_k": 20}
    body["presence_penalty" if dialect == "chat" else "top_k"] = 1.5 if dialect == "chat" else 20
    response = http.post(proxy.session_url(sid) + PATHS[dialect], json=body)
    assert response.status_code == 200, response.text
    for request in scripted.model.model_requests():  # the first attempt and the re-ask
        sent = request.body
        assert (sent["temperature"], sent["top_p"], sent["top_k"]) == (0.8, 1.0, 0)
        assert sent["max_tokens"] == 512 and sent.get("presence_penalty", 0.0) == 0.0
        assert sent["chat_template_kwargs"]["enable_thinking"] is True
    turns = session_json(proxy.url, sid)["turns"]
    assert len(turns) == 2
    assert all(turn["tokens"]["sampling"] == SAMPLING for turn in turns)
    assert session_json(proxy.url, sid)["sampling"] == SAMPLING


def test_opening_a_session_checks_its_sampling(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(scripted.base_url, capture_tokens=True)
    assert _open(proxy.url, sid, {"sampling": {"temperature": 0}}) == 400
    assert _open(proxy.url, sid, {"sampling": {"temprature": 0.8}}) == 400
    assert _open(proxy.url, sid, {"sampling": "hot"}) == 400
    assert _open(proxy.url, sid, {}) == 400
    assert _open(proxy.url, sid, {"sampling": {"top_k": 5}}) == 200
    assert _open(proxy.url, sid, {"cwd": "/srv/work"}) == 200  # the sampling stays
    session = session_json(proxy.url, sid)
    assert session["cwd"] == "/srv/work" and session["sampling"]["top_k"] == 5
    assert session["sampling"]["temperature"] == 0.8


def test_a_chat_upstream_refusal_reaches_a_messages_harness_in_its_shape(
    sid: str, start_proxy: StartProxy
) -> None:
    async def refuse(request: Request) -> Response:
        error = {"error": {"message": "model not found", "type": "NotFoundError", "code": 404}}
        return JSONResponse(error, status_code=404)

    with FakeUpstream() as upstream:
        upstream.handler = refuse
        proxy = start_proxy(upstream.url, capture_tokens=True, fresh=True)
        response = http.post(
            proxy.session_url(sid) + PATHS["messages"], json=first_body("messages")
        )
        assert upstream.requests[0][1] == "/v1/chat/completions"
    assert response.status_code == 404
    assert response.json()["type"] == "error"
    assert "model not found" in response.json()["error"]["message"]


def test_serve_chat_upstream_translates_without_capturing_tokens(
    tmp_path: Path, scripted: ScriptedServer
) -> None:
    scripted.model.set_script(script({"shell": "ls"}))
    store, log = str(tmp_path / "chat.db"), tmp_path / "serve.log"
    with serve_process(scripted.base_url, store, log, "--chat-upstream") as (_, base):
        url = f"{base}/s/cu/v1{PATHS['messages']}"
        answer = decode("messages", http.post(url, json=first_body("messages", stream=True)))
        health = http.get(f"{base}/safeagents/v1/health").json()
    assert commands("messages", answer) == ["ls"]
    (request,) = scripted.model.model_requests()
    assert request.dialect == "chat" and "return_token_ids" not in request.body
    assert health["chat_upstream"] is True and health["capture_tokens"] is False


@pytest.mark.parametrize("dialect", ["responses", "messages"])
def test_a_chat_stream_cut_short_ends_the_harness_s_stream_with_its_own_error(
    dialect: str, sid: str, start_proxy: StartProxy
) -> None:
    async def cut(request: Request) -> Response:
        async def events() -> AsyncIterator[bytes]:
            head = {"id": "chatcmpl-x", "model": "m", "choices": [{"index": 0, "delta": {}}]}
            yield encode_json({**head, "choices": [{"index": 0, "delta": {"role": "assistant"}}]})
            yield encode_json({**head, "choices": [{"index": 0, "delta": {"content": "Half"}}]})

        return StreamingResponse(events(), media_type="text/event-stream")

    with FakeUpstream() as upstream:
        upstream.handler = cut
        proxy = start_proxy(upstream.url, capture_tokens=True, fresh=True)
        url = proxy.session_url(sid) + PATHS[dialect]
        response = http.post(url, json=first_body(dialect, stream=True))
        turns = session_json(proxy.url, sid)["turns"]
    assert response.status_code == 200
    events = [event for event in parse_events(response.content) if event.data.strip()]
    assert b"Half" in response.content
    last = json.loads(events[-1].data)
    expected = "response.failed" if dialect == "responses" else "error"
    assert last["type"] == expected, last
    assert [turn["status"] for turn in turns] == ["error"]
