"""A hypothesis fuzz of the three dialects' requests through the proxy: random JSON shapes,
wrong types, deep nesting and odd paths never give a 500, and every request that reaches the
upstream's model endpoints was checked and recorded."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from http.client import HTTPConnection
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from proxy_testkit import DIALECTS, FakeUpstream, first_body, http
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from safeagents import Firewall
from safeagents.protocols import canonical_path, dialect_for_path, passes_through
from safeagents.proxy import ProxyConfig, ProxyServer

MODEL_PATHS = {"/v1/chat/completions", "/v1/responses", "/v1/messages"}
ENDPOINTS = {"chat": "chat/completions", "responses": "responses", "messages": "messages"}
FIELDS = {
    "chat": ["messages", "model", "tools", "stream", "stream_options", "logprobs"],
    "responses": ["input", "model", "tools", "stream", "background", "instructions"],
    "messages": ["messages", "model", "tools", "stream", "system", "max_tokens"],
}
DEEP = "@DEEP@"
Fuzzed = tuple[str, str, tuple[str, int, str], str]
"""method, path, body (see :func:`bodies`), session id"""

scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=16,
)


class Upstream(FakeUpstream):
    """Answers every model request with plain text in the request's own dialect."""

    def __init__(self) -> None:
        super().__init__()
        self.handler = self._answer

    async def _answer(self, request: Request) -> Response:
        dialect = dialect_for_path(request.url.path) if request.method == "POST" else None
        try:  # reads pass through whatever their body
            body = json.loads(await request.body() or b"null")
        except (ValueError, RecursionError):
            body = None
        if dialect is None or not isinstance(body, dict):
            return JSONResponse({"error": {"message": "no such endpoint"}}, status_code=404)
        answer = dialect.text_response(dialect.parse_request({"model": "m"}), "ok")
        if body.get("stream"):
            return Response(dialect.stream_events(answer), media_type="text/event-stream")
        return JSONResponse(answer)


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Upstream]]:
    store = tmp_path_factory.mktemp("fuzz") / "safeagents.db"
    with Upstream() as upstream:
        config = ProxyConfig(upstream=upstream.url, store=str(store))
        server = ProxyServer(config, firewall=Firewall.load(), port=0).start()
        try:
            yield server.url, upstream
        finally:
            server.stop()


@st.composite
def paths(draw: st.DrawFn, dialect: str, sid: str) -> str:
    endpoint = "".join(
        char.upper() if draw(st.booleans()) and char.isalpha() else char
        for char in ENDPOINTS[dialect]
    )
    endpoint = draw(
        st.sampled_from([endpoint, endpoint.replace("/", "//"), endpoint.replace("/", "%2F")])
    )
    prefix = draw(
        st.sampled_from(
            ["", "/v1", "/V1", "//v1", "/v1/.", "/x/..", "/openai/v1", f"/s/{sid}", f"/s/{sid}//v1"]
        )
    )
    suffix = draw(st.sampled_from(["", "/", ";p=1", "?q=1", "/extra", ":generateContent"]))
    return f"{prefix}/{endpoint}{suffix}"


@st.composite
def bodies(draw: st.DrawFn, dialect: str) -> tuple[str, int, str]:
    """JSON text, and the depth and opening of the nesting that replaces its ``"@DEEP@"``
    (put in by :func:`encoded`, so that hypothesis never prints it)."""
    if draw(st.integers(0, 9)) == 0:
        body: Any = draw(json_values)
    else:
        body = first_body(dialect, stream=draw(st.booleans()))
        for _ in range(draw(st.integers(0, 3))):
            field = draw(st.sampled_from([*FIELDS[dialect], "extra"]))
            action = draw(st.sampled_from(["set", "item", "deep", "drop"]))
            conversation = body.get("input" if dialect == "responses" else "messages")
            if action == "set":
                body[field] = draw(json_values)
            elif action == "item" and isinstance(conversation, list):
                conversation.append(draw(json_values))
            elif action == "deep":
                body[field] = DEEP
            else:
                body.pop(field, None)
    depth = draw(st.sampled_from([10, 127, 129, 500, 1500, 20_000]))
    return json.dumps(body), depth, draw(st.sampled_from(["[", '{"a":']))


def encoded(body: tuple[str, int, str]) -> bytes:
    text, depth, kind = body
    closing = "]" if kind == "[" else "}"
    return text.replace(f'"{DEEP}"', kind * depth + "1" * (kind != "[") + closing * depth).encode()


def send(base: str, method: str, target: str, body: bytes, sid: str) -> int:
    host, port = base.removeprefix("http://").split(":")
    connection = HTTPConnection(host, int(port), timeout=30)
    try:
        headers = {"content-type": "application/json", "x-session-id": sid}
        connection.request(method, target, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def recorded_turns(base: str, sid: str) -> int:
    response = http.get(f"{base}/safeagents/v1/sessions/{sid}")
    return 0 if response.status_code == 404 else len(response.json()["turns"])


@st.composite
def requests(draw: st.DrawFn) -> Fuzzed:
    sid = "f-" + uuid.uuid4().hex[:12]
    dialect = draw(st.sampled_from(list(DIALECTS)))
    method = draw(st.sampled_from(["POST"] * 6 + ["PUT", "PATCH", "GET"]))
    return method, draw(paths(dialect, sid)), draw(bodies(dialect)), sid


def check(proxied: tuple[str, Upstream], request: Fuzzed) -> None:
    base, upstream = proxied
    method, path, fuzzed, sid = request
    body = encoded(fuzzed)
    upstream.requests.clear()
    status = send(base, method, path, body, sid)
    assert status < 500, (method, path, body[:300])
    reached = [(m, p) for m, p, _, _ in upstream.requests if m not in ("GET", "HEAD", "OPTIONS")]
    for sent_method, sent_path in reached:
        model = sent_path in MODEL_PATHS and sent_method == "POST"
        assert model or passes_through(sent_method, canonical_path(sent_path)), (method, path)
    model_calls = sum(1 for m, p in reached if p in MODEL_PATHS)
    assert recorded_turns(base, sid) == model_calls, (method, path, body[:300])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=requests())
def test_fuzzed_requests_get_no_500_and_no_unchecked_model_call(
    proxied: tuple[str, Upstream], request: Fuzzed
) -> None:
    check(proxied, request)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=requests())
def test_fuzzed_requests_at_length(proxied: tuple[str, Upstream], request: Fuzzed) -> None:
    check(proxied, request)
