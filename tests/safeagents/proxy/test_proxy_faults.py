"""Upstream failures, malformed answers, disconnects, restarts and bad input."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from proxy_testkit import (
    BLOCKED,
    DIALECTS,
    PATHS,
    RULE,
    FakeUpstream,
    StartProxy,
    commands,
    conversation_calls,
    decode,
    first_body,
    follow_up,
    http,
    script,
    session_json,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from safeagents.scripted import ScriptedServer


@pytest.fixture
def fake() -> Iterator[FakeUpstream]:
    with FakeUpstream() as server:
        yield server


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _error_shape(dialect: str, body: dict[str, Any]) -> str:
    if dialect == "messages":
        assert body["type"] == "error"
        return str(body["error"]["message"])
    return str(body["error"]["message"])


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("stream", [False, True])
def test_refused_upstream_gives_a_retryable_502_in_the_dialect(
    sid: str, dialect: str, stream: bool, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(f"http://127.0.0.1:{_closed_port()}/v1")
    response = http.post(
        proxy.session_url(sid) + PATHS[dialect], json=first_body(dialect, stream=stream)
    )
    assert response.status_code == 502
    assert "cannot reach the upstream" in _error_shape(dialect, response.json())
    session = session_json(proxy.url, sid)
    assert [(t["status"], t["kind"]) for t in session["turns"]] == [("error", "main")]
    assert session["hacked"] is False


def test_timeouts_give_504_and_5xx_gives_502_and_4xx_passes(
    fake: FakeUpstream, start_proxy: StartProxy
) -> None:
    answers: list[Response] = [
        JSONResponse({"error": {"message": "overloaded"}}, status_code=503),
        JSONResponse({"error": {"message": "context too long"}}, status_code=400),
    ]

    async def handler(request: Request) -> Response:
        if not answers:
            await asyncio.sleep(2)
            return JSONResponse({})
        return answers.pop(0)

    fake.handler = handler
    proxy = start_proxy(fake.url, timeout=0.5)
    url = proxy.base_url + PATHS["chat"]
    overloaded = http.post(url, json=first_body("chat"))
    assert overloaded.status_code == 502 and "503" in overloaded.json()["error"]["message"]
    refused = http.post(url, json=first_body("chat"))
    assert refused.status_code == 400
    assert refused.json() == {"error": {"message": "context too long"}}
    slow = http.post(url, json=first_body("chat"))
    assert slow.status_code == 504 and slow.json()["error"]["code"] == "upstream_timeout"


@pytest.mark.parametrize("stream", [False, True])
def test_malformed_upstream_answers_are_clear_errors_never_half_recorded(
    sid: str, stream: bool, fake: FakeUpstream, start_proxy: StartProxy
) -> None:
    async def handler(request: Request) -> Response:
        if stream:
            return Response(b'data: {"choices": [tru\n\n', media_type="text/event-stream")
        return Response(b"{not json", media_type="application/json")

    fake.handler = handler
    proxy = start_proxy(fake.url)
    response = http.post(
        proxy.session_url(sid) + PATHS["chat"], json=first_body("chat", stream=stream)
    )
    if stream:
        events = [line for line in response.text.splitlines() if line.startswith("data:")]
        assert "malformed" in json.loads(events[0][5:])["error"]["message"]
        assert events[-1] == "data: [DONE]"
    else:
        assert response.status_code == 502
        assert response.json()["error"]["code"] == "upstream_malformed"
    turns = session_json(proxy.url, sid)["turns"]
    assert [(t["status"], t["response"]) for t in turns] == [("error", None)]


def test_client_disconnect_cancels_the_upstream_and_records_an_aborted_turn(
    sid: str, fake: FakeUpstream, start_proxy: StartProxy
) -> None:
    closed: list[str] = []

    async def events() -> AsyncIterator[bytes]:
        try:
            chunk = {"id": "x", "choices": [{"index": 0, "delta": {"content": "tick "}}]}
            while True:
                yield f"data: {json.dumps(chunk)}\n\n".encode()
                await asyncio.sleep(0.02)
        finally:
            closed.append("upstream stream closed")

    async def handler(request: Request) -> Response:
        return StreamingResponse(events(), media_type="text/event-stream")

    fake.handler = handler
    proxy = start_proxy(fake.url)
    url = proxy.session_url(sid) + PATHS["chat"]
    with (
        httpx.Client() as client,
        client.stream("POST", url, json=first_body("chat", stream=True)) as response,
    ):
        first = next(response.iter_bytes())
        assert b"tick" in first
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        turns = session_json(proxy.url, sid).get("turns") if closed else None
        if turns:
            break
        time.sleep(0.02)
    assert closed == ["upstream stream closed"]
    assert [t["status"] for t in session_json(proxy.url, sid)["turns"]] == ["aborted"]


def test_a_failed_reask_keeps_the_session_state_intact(
    sid: str, fake: FakeUpstream, start_proxy: StartProxy
) -> None:
    blocked = {
        "id": "c1",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {
                                "name": "bash",
                                "arguments": json.dumps({"command": BLOCKED}),
                            },
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    answers: list[Response] = [JSONResponse(blocked), JSONResponse({"error": {}}, status_code=500)]

    async def handler(request: Request) -> Response:
        return answers.pop(0) if answers else JSONResponse(blocked)

    fake.handler = handler
    proxy = start_proxy(fake.url, max_reasks=1)
    url = proxy.session_url(sid) + PATHS["chat"]
    body = first_body("chat")
    assert http.post(url, json=body).status_code == 502
    # the retry starts from the same state: nothing from the failed exchange is spliced in
    answer = decode("chat", http.post(url, json=body))
    assert "safeagents blocked" in answer["choices"][0]["message"]["content"]
    third_request = json.loads(fake.requests[2][3])  # the retry's first upstream request
    assert third_request["messages"] == body["messages"]
    turns = session_json(proxy.url, sid)["turns"]
    # the blocked answer was stored (with its finding) before its re-ask went out
    assert [(t["kind"], t["status"]) for t in turns] == [
        ("main", "ok"),
        ("reask", "error"),
        ("main", "ok"),
        ("reask", "ok"),
    ]
    assert [t["delivered"] for t in turns[:2]] == [None, None]
    assert [f["rule_id"] for f in turns[0]["findings"]] == [RULE]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_restart_continues_the_session_from_the_store(
    sid: str, dialect: str, scripted: ScriptedServer, start_proxy: StartProxy, tmp_path: Path
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}, "done"))
    store = str(tmp_path / "restart.db")
    first_proxy = start_proxy(scripted.base_url, fresh=True, store=store)
    body = first_body(dialect)
    path = f"/s/{sid}/v1" + PATHS[dialect]
    answer = decode(dialect, http.post(first_proxy.url + path, json=body))
    assert commands(dialect, answer) == ["ls"]
    first_proxy.stop()

    second_proxy = start_proxy(scripted.base_url, fresh=True, store=store)
    http.post(second_proxy.url + path, json=follow_up(dialect, body, answer, ["x"]))
    seen = scripted.model.model_requests()[-1].body
    assert conversation_calls(dialect, seen) == [BLOCKED, "ls"]
    assert session_json(second_proxy.url, sid)["findings"][0]["rule_id"] == RULE


@pytest.mark.parametrize("dialect", DIALECTS)
def test_bad_input_gets_clear_4xx_answers(
    dialect: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(scripted.base_url, body_limit=4096)
    url = proxy.base_url + PATHS[dialect]
    bad = http.post(url, content=b"{nope", headers={"content-type": "application/json"})
    assert bad.status_code == 400 and "not valid JSON" in _error_shape(dialect, bad.json())
    array = http.post(url, json=[1, 2])
    assert array.status_code == 400 and "JSON object" in _error_shape(dialect, array.json())
    huge = http.post(url, json={"model": "m", "messages": [], "pad": "x" * 5000})
    assert huge.status_code == 413
    assert http.post(proxy.url + "/v1/embeddings", content=b"x" * 5000).status_code == 413
    unknown = http.get(proxy.url + "/safeagents/v1/nothing-here")
    assert unknown.status_code == 404 and "no admin endpoint" in unknown.json()["error"]["message"]
    assert http.get(proxy.url + "/safeagents/other").status_code == 404
    assert scripted.model.model_requests() == []


def test_gzip_request_bodies_are_inflated(
    scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    import gzip

    scripted.model.set_script(script({"shell": "ls"}))
    proxy = start_proxy(scripted.base_url, body_limit=4096)
    packed = gzip.compress(json.dumps(first_body("chat")).encode())
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    answer = http.post(proxy.base_url + PATHS["chat"], content=packed, headers=headers)
    assert answer.status_code == 200 and commands("chat", answer.json()) == ["ls"]
    bomb = gzip.compress(b"{" + b" " * 100_000 + b"}")
    assert (
        http.post(proxy.base_url + PATHS["chat"], content=bomb, headers=headers).status_code == 413
    )
