"""The response limit of ``safeagents intercept`` (``--response-limit``, as ``serve``'s): an
answer past it is not read into memory or checked whole; the harness gets serve's 502
``upstream_too_large`` (a stream ends with it as an error event) and the turn is recorded."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from intercept_testkit import Intercept, StartIntercept
from proxy_testkit import PATHS, FakeUpstream, first_body
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

MIB = 1024 * 1024
PIECE = b"x" * (256 * 1024)


def _whole(size: int) -> bytes:
    head = b'{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,'
    head += b'"message":{"role":"assistant","content":"'
    return head + b"x" * size + b'"},"finish_reason":"stop"}]}'


async def _chunked(size: int) -> AsyncIterator[bytes]:
    body = _whole(size)
    for start in range(0, len(body), len(PIECE)):
        yield body[start : start + len(PIECE)]


async def _events(size: int) -> AsyncIterator[bytes]:
    delta = {"id": "s", "model": "m", "choices": [{"index": 0, "delta": {"content": "y" * 65536}}]}
    event = f"data: {json.dumps(delta)}\n\n".encode()
    for _ in range(size // len(event) + 1):
        yield event
    yield b"data: [DONE]\n\n"


def recorded_turn(intercept: Intercept, sid: str) -> dict[str, Any]:
    """The session's one turn, once recorded (a stream's is written as it breaks off)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            (turn,) = intercept.session(sid)["turns"]
            return dict(turn)
        except (AssertionError, ValueError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture(scope="module")
def huge() -> Iterator[FakeUpstream]:
    """Answers 3 MiB: with a length (``-length``), chunked (``-chunked``) or as a stream."""

    async def handler(request: Request) -> Response:
        body = json.loads(await request.body())
        if body.get("stream"):
            return StreamingResponse(_events(3 * MIB), media_type="text/event-stream")
        if body["model"].endswith("-chunked"):
            return StreamingResponse(_chunked(3 * MIB), media_type="application/json")
        return Response(_whole(3 * MIB), media_type="application/json")

    with FakeUpstream() as server:
        server.handler = handler
        yield server


@pytest.mark.parametrize("shape", ["length", "chunked"])
def test_a_whole_answer_past_the_limit_is_a_recorded_502(
    sid: str, huge: FakeUpstream, start_intercept: StartIntercept, shape: str
) -> None:
    intercept = start_intercept("--response-limit", "1")
    body = {**first_body("chat"), "model": f"m-{shape}"}
    with httpx.Client(proxy=intercept.proxy, timeout=30, trust_env=False) as client:
        answer = client.post(huge.url + PATHS["chat"], json=body, headers={"x-session-id": sid})
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert error["code"] == "upstream_too_large"
    assert "exceeds the response limit of 1 MiB" in error["message"]
    turn = recorded_turn(intercept, sid)
    assert turn["status"] == "error" and "exceeds the response limit" in turn["error"]
    assert turn["response"] is None


def test_a_stream_past_the_limit_ends_with_the_error_event(
    sid: str, huge: FakeUpstream, start_intercept: StartIntercept
) -> None:
    intercept = start_intercept("--response-limit", "1")
    body = first_body("chat", stream=True)
    received, tail = 0, b""
    with (
        httpx.Client(proxy=intercept.proxy, timeout=30, trust_env=False) as client,
        client.stream(
            "POST", huge.url + PATHS["chat"], json=body, headers={"x-session-id": sid}
        ) as response,
    ):
        assert response.status_code == 200
        for chunk in response.iter_bytes():
            received += len(chunk)
            tail = (tail + chunk)[-4096:]
    assert MIB - 128 * 1024 < received < MIB + 128 * 1024  # the text forwarded, then cut off
    events = [line for line in tail.decode().splitlines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]"
    error = json.loads(events[-2][6:])["error"]
    assert "exceeds the response limit of 1 MiB" in error["message"]
    turn = recorded_turn(intercept, sid)
    assert turn["status"] == "error" and "exceeds the response limit" in turn["error"]


def test_the_limit_must_be_positive(start_intercept: StartIntercept) -> None:
    with pytest.raises(RuntimeError, match="--response-limit must be positive"):
        start_intercept("--response-limit", "0")
