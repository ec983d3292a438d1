"""Hostile request bodies and model answers: a 400 or a 502 in the harness's dialect, never a
500, and a session stays usable whatever the model once answered."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from proxy_testkit import (
    DIALECTS,
    PATHS,
    FakeUpstream,
    StartProxy,
    commands,
    first_body,
    http,
    session_json,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from safeagents.protocols import MAX_REQUEST_DEPTH, Dialect

DEEP_ARGUMENTS = '{"command":"ls","x":' + "[" * 960 + "]" * 960 + "}"


def nested(depth: int, kind: str = "list") -> Any:
    value: Any = 1
    for _ in range(depth - 1):
        value = [value] if kind == "list" else {"x": value}
    return value


def deep_text(depth: int, kind: str = "list") -> str:
    """JSON text nesting ``depth`` lists (or objects), deeper than ``json.dumps`` can write."""
    if kind == "list":
        return "[" * depth + "]" * depth
    return '{"x":' * depth + "1" + "}" * depth


def with_deep(value: Any, depth: int, kind: str = "list") -> bytes:
    """``value`` as JSON text, with ``"@DEEP@"`` standing for :func:`deep_text`."""
    return json.dumps(value).replace('"@DEEP@"', deep_text(depth, kind)).encode()


def text_answer(dialect: Dialect, body: Any, text: str = "done") -> Response:
    answer = dialect.text_response(dialect.parse_request({"model": "m"}), text)
    if isinstance(body, dict) and body.get("stream"):
        return Response(dialect.stream_events(answer), media_type="text/event-stream")
    return JSONResponse(answer)


def chat_call_answer(arguments: str) -> dict[str, Any]:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": arguments},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }


class Upstream(FakeUpstream):
    """Answers every model request with ``answers`` in turn, then with plain text."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[Any] = []
        self.handler = self._answer

    async def _answer(self, request: Request) -> Response:
        body = json.loads(await request.body() or b"null")
        if self.answers:
            answer = self.answers.pop(0)
            return answer if isinstance(answer, Response) else JSONResponse(answer)
        for name, path in PATHS.items():
            if request.url.path.endswith(path):
                return text_answer(DIALECTS[name], body)
        return JSONResponse({"error": {"message": "no such endpoint"}}, status_code=404)

    def model_posts(self) -> list[str]:
        return [path for method, path, _, _ in self.requests if method == "POST"]


@pytest.fixture(scope="module")
def fake_upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture
def fake(fake_upstream: Upstream) -> Upstream:
    fake_upstream.requests.clear()
    fake_upstream.answers.clear()
    return fake_upstream


def post(url: str, body: Any) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return http.post(url, content=content, headers={"content-type": "application/json"})


def assert_dialect_error(dialect: str, response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    document = response.json()
    if dialect == "messages":
        assert document["type"] == "error"
        message: str = document["error"]["message"]
    else:
        message = document["error"]["message"]
    return message


# item 5: deep JSON is a 400 in the dialect, before the upstream is called


@pytest.mark.parametrize("dialect", list(DIALECTS))
@pytest.mark.parametrize("depth", [MAX_REQUEST_DEPTH + 1, 1000, 5000, 100_000])
def test_deeply_nested_request_json_is_a_400(
    sid: str, dialect: str, depth: int, fake: Upstream, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(fake.url)
    body = with_deep({**first_body(dialect), "metadata": "@DEEP@"}, depth - 1)
    response = post(proxy.session_url(sid) + PATHS[dialect], body)
    assert "nested more than" in assert_dialect_error(dialect, response, 400)
    assert fake.model_posts() == []


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_hundreds_of_nested_message_objects_are_a_400(
    sid: str, dialect: str, fake: Upstream, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(fake.url)
    body = first_body(dialect)
    conversation = "input" if dialect == "responses" else "messages"
    body[conversation].append({"role": "user", "content": "hi", "extra": nested(450, "dict")})
    response = post(proxy.session_url(sid) + PATHS[dialect], body)
    assert_dialect_error(dialect, response, 400)
    assert fake.model_posts() == []


def test_a_request_just_within_the_depth_bound_is_served(
    sid: str, fake: Upstream, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(fake.url)
    body = first_body("chat")
    body["metadata"] = nested(MAX_REQUEST_DEPTH - 1)
    assert post(proxy.session_url(sid) + PATHS["chat"], body).status_code == 200
    assert fake.model_posts() == ["/v1/chat/completions"]


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_a_deeply_nested_outcome_is_a_400(
    sid: str, depth: int, fake: Upstream, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(fake.url)
    assert post(proxy.session_url(sid) + PATHS["chat"], first_body("chat")).status_code == 200
    url = f"{proxy.url}/safeagents/v1/sessions/{sid}/outcome"
    response = post(url, with_deep({"success": True, "detail": "@DEEP@"}, depth))
    assert response.status_code == 400 and "nested more than" in response.json()["error"]["message"]
    assert post(url, {"success": True}).status_code == 200


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_numbers_no_json_encoder_can_write_back_are_a_400(
    sid: str, number: str, fake: Upstream, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(fake.url)
    body = json.dumps({**first_body("chat"), "temperature": "@N@"}).replace('"@N@"', number)
    response = post(proxy.session_url(sid) + PATHS["chat"], body.encode())
    assert "not valid JSON" in assert_dialect_error("chat", response, 400)
    assert fake.model_posts() == []
    outcome = post(f"{proxy.url}/safeagents/v1/sessions/{sid}/outcome", b'{"score": NaN}')
    assert outcome.status_code in (400, 404)


# item 5: deep tool-call arguments in the history and in the model's answer


def history_with(arguments: str) -> dict[str, Any]:
    body = first_body("chat")
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": arguments},
    }
    body["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
    ]
    return body


@pytest.mark.parametrize("depth", [962, 1400, 50_000])
def test_deep_history_arguments_are_replayed_and_the_answer_delivered(
    sid: str, depth: int, fake: Upstream, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(fake.url)
    arguments = '{"command":"ls","x":' + "[" * (depth - 2) + "]" * (depth - 2) + "}"
    fake.answers.append(chat_call_answer('{"command": "ls"}'))  # checking it reads the history
    response = post(proxy.session_url(sid) + PATHS["chat"], history_with(arguments))
    assert response.status_code == 200, response.text
    assert commands("chat", response.json()) == ["ls"]
    assert fake.model_posts() == ["/v1/chat/completions"]
    assert session_json(proxy.url, sid)["turns"][0]["status"] == "ok"


@pytest.mark.parametrize("stream", [False, True])
def test_model_arguments_nested_1500_deep_are_no_500(
    sid: str, stream: bool, fake: Upstream, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(fake.url)
    deep = '{"command":"ls","x":' + "[" * 1500 + "]" * 1500 + "}"
    fake.answers.append(chat_call_answer(deep))
    response = post(proxy.session_url(sid) + PATHS["chat"], first_body("chat", stream=stream))
    assert response.status_code in (200, 502), response.text


@pytest.mark.parametrize("stream", [False, True])
def test_a_model_answer_nested_1500_deep_is_a_502(
    sid: str, stream: bool, fake: Upstream, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(fake.url)
    block = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": "@DEEP@"}
    answer = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [block],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    if stream:
        start = {**answer, "content": [], "stop_reason": None}
        partial = deep_text(1500, "dict")
        events = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {**block, "input": {}},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": partial},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_stop", {"type": "message_stop"}),
        ]
        sse = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
        fake.answers.append(Response(sse.encode(), media_type="text/event-stream"))
    else:
        fake.answers.append(
            Response(with_deep(answer, 1500, "dict"), media_type="application/json")
        )
    response = post(
        proxy.session_url(sid) + PATHS["messages"], first_body("messages", stream=stream)
    )
    if stream:
        assert response.status_code == 200 and b"error" in response.content
    else:
        assert "nested more than" in assert_dialect_error("messages", response, 502)


# item 6: whatever was delivered and stored can be replayed


def test_a_session_survives_an_answer_with_arguments_960_deep(
    sid: str, fake: Upstream, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(fake.url)
    url = proxy.session_url(sid) + PATHS["chat"]
    fake.answers.append(chat_call_answer(DEEP_ARGUMENTS))
    first = post(url, first_body("chat"))
    assert first.status_code == 200, first.text
    body = history_with(DEEP_ARGUMENTS)  # what the harness sends back, with the call it got
    fake.answers += [chat_call_answer('{"command": "ls"}') for _ in range(3)]
    for turn in range(3):
        later = post(url, body)
        assert later.status_code == 200, (turn, later.text)
        message = later.json()["choices"][0]["message"]
        results = [
            {"role": "tool", "tool_call_id": call["id"], "content": "ok"}
            for call in message.get("tool_calls") or ()
        ]
        body["messages"] += [message, *results]
    turns = session_json(proxy.url, sid)["turns"]
    assert [turn["status"] for turn in turns][-3:] == ["ok", "ok", "ok"]


# item 13: fields the proxy reads have the dialect's types, or the request is a 400

BAD_FIELDS = [
    ("chat", "messages", "hello"),
    ("chat", "messages", [1, 2]),
    ("chat", "messages", [{"content": "no role"}]),
    ("chat", "model", {}),
    ("chat", "tools", "x"),
    ("chat", "tools", ["x"]),
    ("chat", "stream", "yes"),
    ("chat", "stream_options", []),
    ("responses", "input", 5),
    ("responses", "input", ["text"]),
    ("responses", "model", 5),
    ("responses", "tools", {"a": 1}),
    ("responses", "background", True),
    ("messages", "messages", {"role": "user"}),
    ("messages", "messages", [{"role": "user", "content": 5}]),
    ("messages", "system", 5),
    ("messages", "model", ["m"]),
    ("messages", "tools", "x"),
]


@pytest.mark.parametrize(("dialect", "field", "value"), BAD_FIELDS)
def test_a_field_of_the_wrong_type_is_a_400_and_never_forwarded(
    sid: str, dialect: str, field: str, value: Any, fake: Upstream, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(fake.url)
    body = {**first_body(dialect), field: value}
    message = assert_dialect_error(
        dialect, post(proxy.session_url(sid) + PATHS[dialect], body), 400
    )
    assert f"malformed {dialect} request" in message and field in message
    assert fake.model_posts() == []


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_fields_the_proxy_does_not_read_are_forwarded_untouched(
    sid: str, dialect: str, fake: Upstream, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(fake.url)
    extra = {"vendor_field": {"any": ["shape", 1, None]}, "temperature": "not checked"}
    body = {**first_body(dialect), **extra}
    assert post(proxy.session_url(sid) + PATHS[dialect], body).status_code == 200
    (sent,) = [json.loads(content) for method, _, _, content in fake.requests if method == "POST"]
    assert {key: sent[key] for key in extra} == extra
