"""Odd spellings of model endpoints are checked or refused, never passed through unseen."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from proxy_testkit import BLOCKED, RULE, StartProxy, commands, first_body, script, session_json

from safeagents.protocols import (
    CHAT,
    MESSAGES,
    RESPONSES,
    canonical_path,
    dialect_for_path,
    passes_through,
    session_prefix,
    unchecked_model_endpoint,
)
from safeagents.scripted import ScriptedServer


def send(base: str, method: str, target: str, body: Any = None, **headers: str) -> Any:
    """One request with ``target`` on the request line exactly as given (no client clean-up)."""
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        content = None if body is None else json.dumps(body).encode()
        sent = {"content-type": "application/json", **headers} if content else headers
        connection.request(method, target, body=content, headers=sent)
        response = connection.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None
    finally:
        connection.close()


ODD_CHAT_PATHS = [
    "/v1//chat/completions",
    "//v1/chat/completions",
    "/v1/./chat/completions",
    "/V1/Chat/Completions",
    "/openai/v1/chat/completions",
    "/api/v1/chat/completions",
    "/v1/chat%2Fcompletions",
    "/v1/chat%252Fcompletions",
    "/v1/models/../chat/completions",
    "/v1/chat/completions;x=1",
    "/v1/chat/completions/",
    "/v1\\chat\\completions",
]


@pytest.mark.parametrize("path", ODD_CHAT_PATHS)
def test_every_spelling_of_a_model_endpoint_is_checked_and_recorded(
    sid: str, path: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}))
    proxy = start_proxy(scripted.base_url)
    status, answer = send(proxy.url, "POST", path, first_body("chat"), **{"x-session-id": sid})
    assert status == 200, answer
    assert commands("chat", answer) == ["ls"]
    first, reask = scripted.model.model_requests()
    assert first.path == reask.path == "/v1/chat/completions"  # the upstream sees one spelling
    session = session_json(proxy.url, sid)
    assert session["hacked"] is True and session["findings"][0]["rule_id"] == RULE


@pytest.mark.parametrize(
    "path", ["/s/{sid}//v1/chat/completions", "//s/{sid}/./v1/chat/completions"]
)
def test_a_session_prefix_before_an_odd_path_names_the_session(
    sid: str, path: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}))
    proxy = start_proxy(scripted.base_url)
    status, answer = send(proxy.url, "POST", path.format(sid=sid), first_body("chat"))
    assert status == 200 and commands("chat", answer) == ["ls"]
    assert session_json(proxy.url, sid)["hacked"] is True


REFUSED = [
    ("POST", "/v1/completions", "chat"),
    ("POST", "/openai/deployments/d/completions", "chat"),
    ("POST", "/api/chat", "chat"),
    ("POST", "/api/generate", "chat"),
    ("POST", "/generate", "chat"),
    ("POST", "/invocations", "chat"),
    ("POST", "/v1beta/models/m:generateContent", "chat"),
    ("POST", "/v1/messages/batches", "messages"),
    ("PUT", "/v1/chat/completions", "chat"),
    ("PATCH", "/v1//messages", "messages"),
    ("POST", "/v1/something-else", "chat"),
    ("DELETE", "/v1/anything", "chat"),
]


@pytest.mark.parametrize(("method", "path", "shape"), REFUSED)
def test_writes_to_unchecked_or_unlisted_endpoints_are_refused(
    method: str, path: str, shape: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}))
    proxy = start_proxy(scripted.base_url)
    status, answer = send(proxy.url, method, path, first_body("chat"))
    assert status == 404
    if shape == "messages":
        assert answer["type"] == "error" and "does not" in answer["error"]["message"]
    else:
        assert "does not" in answer["error"]["message"]
        assert answer["error"]["code"] in ("unchecked_endpoint", "not_forwarded")
    assert scripted.model.requests == []


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/models"),
        ("GET", "//v1/./models"),
        ("GET", "/s/abc/v1/models/m"),
        ("GET", "/v1/models%E2%98%83"),
        ("POST", "/v1/messages/count_tokens"),
        ("POST", "/api/show"),
        ("POST", "/v1/embeddings"),
    ],
)
def test_reads_and_listed_writes_pass_through(
    method: str, path: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(scripted.base_url)
    body = {"messages": [], "model": "m"} if method == "POST" else None
    status, _ = send(proxy.url, method, path, body)
    assert status in (200, 404)  # the upstream's answer, whatever it is
    (request,) = scripted.model.requests
    assert request.method == method and request.dialect is None


@pytest.mark.parametrize(
    ("path", "canonical"),
    [
        ("/v1//chat/completions", "/v1/chat/completions"),
        ("//v1/./x/../chat/completions?q=1#f", "/v1/chat/completions"),
        ("/v1/chat%252Fcompletions", "/v1/chat/completions"),
        ("/v1/chat/completions;jsessionid=1", "/v1/chat/completions"),
        ("/V1/Models", "/V1/Models"),
        ("/../../etc", "/etc"),
        ("", "/"),
    ],
)
def test_canonical_path(path: str, canonical: str) -> None:
    assert canonical_path(path) == canonical


def test_routing_reads_the_canonical_path() -> None:
    assert dialect_for_path("/S/x/v1/RESPONSES") is RESPONSES
    assert dialect_for_path("/anthropic/v1/messages/") is MESSAGES
    assert dialect_for_path("/v1/chat/completions/extra") is None
    assert session_prefix("/s/run-1//v1/./chat/completions") == ("run-1", "/v1/chat/completions")
    assert session_prefix("/s/run-1") == (None, "/s/run-1")
    assert dialect_for_path("/s/run-1/chat/completions") is CHAT
    assert unchecked_model_endpoint("POST", "/v1/completions")
    assert not unchecked_model_endpoint("GET", "/v1/completions")
    assert not unchecked_model_endpoint("POST", "/v1/messages/count_tokens")
    assert passes_through("PUT", "/v1/files/f-1") and passes_through("HEAD", "/anything")
    assert not passes_through("POST", "/v1/load_anything")
