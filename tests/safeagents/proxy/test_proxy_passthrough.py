"""Pass-through of everything that is not a model endpoint, and byte-identical answers."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from proxy_testkit import (
    BLOCKED,
    PATHS,
    RULE,
    FakeUpstream,
    StartProxy,
    first_body,
    http,
    session_json,
)
from starlette.requests import Request
from starlette.responses import Response

from safeagents.scripted import ScriptedServer

_CALL = {
    "id": "call_9",
    "type": "function",
    "function": {"name": "bash", "arguments": json.dumps({"command": BLOCKED})},
}
CANNED_JSON = json.dumps(
    {
        "id": "chatcmpl-fixed",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [_CALL]},
                "finish_reason": "tool_calls",
            }
        ],
    },
    indent=1,
).encode()
_CHUNKS = [
    {"role": "assistant", "content": "Removing it."},
    {"tool_calls": [{"index": 0, **_CALL}]},
]
CANNED_SSE = (
    b"".join(
        b"data: "
        + json.dumps(
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        ).encode()
        + b"\n\n"
        for delta, finish in [(_CHUNKS[0], None), (_CHUNKS[1], None), ({}, "tool_calls")]
    )
    + b"data: [DONE]\n\n"
)


@pytest.fixture
def fake() -> Iterator[FakeUpstream]:
    with FakeUpstream() as server:
        yield server


def test_other_paths_pass_through_with_status_and_headers(
    scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(scripted.base_url)
    direct = http.get(scripted.base_url + "/models")
    for prefix in ("", "/s/some-session"):
        proxied = http.get(proxy.url + prefix + "/v1/models")
        assert proxied.status_code == 200 and proxied.json() == direct.json()
    missing = http.get(proxy.url + "/v1/nothing")
    assert (
        missing.status_code == 404
        and missing.json() == http.get(scripted.url + "/v1/nothing").json()
    )
    counted = http.post(proxy.url + "/v1/messages/count_tokens", json={"messages": []})
    assert counted.status_code == 200 and "input_tokens" in counted.json()


def test_pass_through_forwards_headers_both_ways(
    fake: FakeUpstream, start_proxy: StartProxy
) -> None:
    async def handler(request: Request) -> Response:
        return Response(b"raw", status_code=201, headers={"x-upstream": "yes"})

    fake.handler = handler
    proxy = start_proxy(fake.url)
    response = http.put(
        proxy.url + "/v1/files/1?purpose=x",
        content=b"payload",
        headers={"x-custom": "1", "authorization": "Bearer sa-me"},
    )
    assert (response.status_code, response.content) == (201, b"raw")
    assert response.headers["x-upstream"] == "yes"
    method, path, headers, body = fake.requests[-1]
    assert (method, path, body) == ("PUT", "/v1/files/1", b"payload")
    assert headers["x-custom"] == "1" and "authorization" not in headers


@pytest.mark.parametrize("stream", [False, True])
def test_monitor_mode_answers_are_byte_identical(
    stream: bool, sid: str, fake: FakeUpstream, start_proxy: StartProxy
) -> None:
    async def handler(request: Request) -> Response:
        if stream:
            return Response(CANNED_SSE, media_type="text/event-stream")
        return Response(CANNED_JSON, media_type="application/json")

    fake.handler = handler
    proxy = start_proxy(fake.url, mode="monitor")
    response = http.post(
        proxy.session_url(sid) + PATHS["chat"], json=first_body("chat", stream=stream)
    )
    assert response.content == (CANNED_SSE if stream else CANNED_JSON)
    session = session_json(proxy.url, sid)
    assert session["hacked"] is True and session["findings"][0]["rule_id"] == RULE
