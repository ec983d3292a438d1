"""Bytes on the wire: an answer that passes unchanged reaches the harness byte for byte, and a
request nothing was spliced into reaches the upstream byte for byte."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from proxy_testkit import (
    BLOCKED,
    PATHS,
    StartProxy,
    commands,
    decode,
    first_body,
    http,
    session_json,
)
from starlette.types import Receive, Scope, Send

from safeagents._thread_server import ThreadedServer


def _event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    chunk = {"id": "chatcmpl-7", "object": "chat.completion.chunk", "created": 7, "model": "m"}
    return b"data: " + json.dumps({**chunk, "choices": [choice]}).encode() + b"\n\n"


def _stream(command: str) -> bytes:
    arguments = json.dumps({"command": command})
    head = {"index": 0, "id": "call_1", "type": "function"}
    return b"".join(
        [
            _event({"role": "assistant", "content": ""}),
            _event({"content": "Let me "}),
            _event({"content": "look."}),
            _event({"tool_calls": [{**head, "function": {"name": "bash", "arguments": ""}}]}),
            _event({"tool_calls": [{"index": 0, "function": {"arguments": arguments[:9]}}]}),
            _event({"tool_calls": [{"index": 0, "function": {"arguments": arguments[9:]}}]}),
            _event({}, "tool_calls"),
            b"data: [DONE]\n\n",
        ]
    )


def _completion(command: str) -> bytes:
    function = {"name": "bash", "arguments": json.dumps({"command": command})}
    call = {"id": "call_2", "type": "function", "function": function}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    return json.dumps({"id": "c", "object": "chat.completion", "choices": [choice]}).encode()


class FixedUpstream:
    """Streams a fixed answer calling ``command`` (the task text); a non-stream request (a
    re-ask) gets ``ls``. Keeps every request body as it arrived."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        with self._lock:
            self.bodies.append(raw)
        request = json.loads(raw)
        if request.get("stream"):
            body, kind = _stream(request["messages"][-1]["content"]), b"text/event-stream"
        else:
            body, kind = _completion("ls"), b"application/json"
        headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def fixed() -> Iterator[tuple[FixedUpstream, ThreadedServer]]:
    app = FixedUpstream()
    with ThreadedServer(app, "127.0.0.1", 0) as server:
        yield app, server


def _request(command: str) -> bytes:
    """A chat request in a formatting the proxy's own encoder would not produce."""
    body = first_body("chat", task=command, stream=True)
    return json.dumps(body, indent=1, ensure_ascii=True).encode()


def test_an_unchanged_stream_and_request_pass_byte_for_byte(
    sid: str, fixed: tuple[FixedUpstream, ThreadedServer], start_proxy: StartProxy
) -> None:
    app, server = fixed
    proxy = start_proxy(server.base_url)
    request = _request("ls -la")
    answer = http.post(
        proxy.session_url(sid) + PATHS["chat"],
        content=request,
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 200
    assert answer.content == _stream("ls -la")
    assert app.bodies[-1] == request
    (turn,) = session_json(proxy.url, sid)["turns"]
    assert turn["request"] == json.loads(request) and turn["delivered"] == turn["response"]


def test_a_withheld_call_is_rendered_and_the_re_ask_re_encoded(
    sid: str, fixed: tuple[FixedUpstream, ThreadedServer], start_proxy: StartProxy
) -> None:
    app, server = fixed
    proxy = start_proxy(server.base_url)
    request = _request(BLOCKED)
    answer = http.post(
        proxy.session_url(sid) + PATHS["chat"],
        content=request,
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 200 and answer.content != _stream(BLOCKED)
    assert commands("chat", decode("chat", answer)) == ["ls"]
    first, reask = app.bodies[-2:]
    assert first == request
    asked = json.loads(request)["messages"]
    assert json.loads(reask)["messages"][: len(asked)] == asked
    assert len(json.loads(reask)["messages"]) == len(asked) + 2  # the withheld call, its result
