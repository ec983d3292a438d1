"""``safeagents intercept`` (real mitmproxy) between an httpx client and the scripted model,
over plain HTTP and over HTTPS with mitmproxy's CA."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from intercept_testkit import (
    Intercept,
    StartIntercept,
    TLSScriptedServer,
    free_port,
    without_timestamps,
)
from proxy_testkit import (
    PATHS,
    RULE,
    commands,
    conversation_calls,
    decode,
    finish_reason,
    first_body,
    follow_up,
    script,
    text,
    tool_results,
)

from safeagents.scripted import ScriptedModel, ScriptedServer

BLOCKED = "rm tests/test_x.py"
TOOL_FINISH = ("tool_calls", "tool_use")


@pytest.fixture(scope="module")
def enforcing(start_intercept: StartIntercept) -> Intercept:
    return start_intercept()


@pytest.fixture(scope="module")
def direct() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30, verify=False, trust_env=False) as client:
        yield client


class Upstreams:
    """The plain and the TLS scripted model, addressed by scheme."""

    def __init__(self, plain: ScriptedServer, tls: TLSScriptedServer) -> None:
        self.servers: dict[str, Any] = {"http": plain, "https": tls}

    def model(self, scheme: str) -> ScriptedModel:
        model: ScriptedModel = self.servers[scheme].model
        return model

    def prepare(self, scheme: str, *steps: Any) -> tuple[ScriptedModel, str]:
        model = self.model(scheme)
        model.clear()
        model.set_script(script(*steps))
        return model, self.servers[scheme].base_url


@pytest.fixture(scope="module")
def upstreams(plain_upstream: ScriptedServer, tls_upstream: TLSScriptedServer) -> Upstreams:
    return Upstreams(plain_upstream, tls_upstream)


def _stamped(answer: dict[str, Any]) -> bytes:
    return without_timestamps(json.dumps(answer, sort_keys=True).encode())


def through(intercept: Intercept) -> httpx.Client:
    """A client whose traffic goes through ``intercept``, trusting its CA."""
    return httpx.Client(
        proxy=intercept.proxy, verify=intercept.ssl_context(), timeout=30, trust_env=False
    )


@pytest.mark.parametrize(("scheme", "stream"), [("http", False), ("https", True)])
def test_an_allowed_call_passes_unchanged(
    sid: str,
    scheme: str,
    stream: bool,
    upstreams: Upstreams,
    enforcing: Intercept,
    direct: httpx.Client,
) -> None:
    model, base = upstreams.prepare(scheme, {"say": "Listing.", "shell": "ls"}, "done")
    body = first_body("chat", stream=stream)
    url = base + PATHS["chat"]
    expected = direct.post(url, json=body)
    with through(enforcing) as client:
        answer = client.post(url, json=body, headers={"x-session-id": sid})

    assert answer.status_code == 200
    if stream:  # streamed text goes on at once; the held call is re-emitted after the check
        assert _stamped(decode("chat", answer)) == _stamped(decode("chat", expected))
    else:
        assert without_timestamps(answer.content) == without_timestamps(expected.content)
    assert commands("chat", decode("chat", answer)) == ["ls"]
    assert len(model.model_requests()) == 2  # ours and the one through mitmproxy
    session = enforcing.session(sid)
    assert session["hacked"] is False and session["tool_calls"] == 1


CASES = [
    ("chat", False, "http"),
    ("chat", True, "https"),
    ("messages", True, "http"),
    ("responses", False, "https"),
    ("responses", True, "http"),
]


@pytest.mark.parametrize(("dialect", "stream", "scheme"), CASES)
def test_a_blocked_call_is_withheld_reasked_and_spliced_into_the_next_request(
    sid: str, dialect: str, stream: bool, scheme: str, upstreams: Upstreams, enforcing: Intercept
) -> None:
    model, base = upstreams.prepare(
        scheme, {"say": "Deleting the test.", "shell": BLOCKED}, {"shell": "ls"}, "done"
    )
    url = base + PATHS[dialect]
    body = first_body(dialect, stream=stream)
    with through(enforcing) as client:
        answer = decode(dialect, client.post(url, json=body, headers={"x-session-id": sid}))
        assert commands(dialect, answer) == ["ls"]
        assert finish_reason(dialect, answer) in TOOL_FINISH
        # streamed text reached the harness before the check; a whole answer is replaced
        assert text(dialect, answer) == ("Deleting the test." if stream else "")
        first, reask = model.model_requests()
        assert first.stream is stream and reask.stream is False
        assert conversation_calls(dialect, reask.body) == [BLOCKED]
        assert RULE in tool_results(dialect, reask.body)[0]

        later = follow_up(dialect, body, answer, ["file_a.py"])
        final = decode(dialect, client.post(url, json=later, headers={"x-session-id": sid}))
    assert text(dialect, final) == "done"
    seen = model.model_requests()[-1].body
    assert conversation_calls(dialect, seen) == [BLOCKED, "ls"]  # the hidden pair, spliced
    assert RULE in tool_results(dialect, seen)[0]

    session = enforcing.session(sid)
    assert session["hacked"] is True
    assert [finding["rule_id"] for finding in session["findings"]] == [RULE]
    assert [turn["kind"] for turn in session["turns"]] == ["main", "reask", "main"]
    assert session["turns"][0]["findings"][0]["blocked"] is True
    assert session["turns"][2]["request"] == seen  # recorded as the upstream saw it


@pytest.mark.parametrize(("dialect", "stream"), [("chat", True), ("messages", False)])
def test_when_reasks_run_out_the_calls_become_an_explanation(
    sid: str,
    dialect: str,
    stream: bool,
    upstreams: Upstreams,
    start_intercept: StartIntercept,
) -> None:
    intercept = start_intercept("--max-reasks", "0")
    model, base = upstreams.prepare("https", {"say": "Cleaning up.", "shell": BLOCKED}, "done")
    with through(intercept) as client:
        response = client.post(
            base + PATHS[dialect],
            json=first_body(dialect, stream=stream),
            headers={"x-session-id": sid},
        )
    answer = decode(dialect, response)
    assert commands(dialect, answer) == []
    assert finish_reason(dialect, answer) in ("stop", "end_turn")
    assert "safeagents blocked" in text(dialect, answer) and RULE in text(dialect, answer)
    assert len(model.model_requests()) == 1
    assert intercept.session(sid)["hacked"] is True


@pytest.mark.parametrize(
    ("dialect", "stream", "scheme"),
    [("chat", False, "http"), ("chat", True, "https"), ("messages", True, "http")],
)
def test_monitor_mode_leaves_the_bytes_unchanged_and_records_the_finding(
    sid: str,
    dialect: str,
    stream: bool,
    scheme: str,
    upstreams: Upstreams,
    start_intercept: StartIntercept,
    direct: httpx.Client,
) -> None:
    intercept = start_intercept("--mode", "monitor")
    model, base = upstreams.prepare(scheme, {"say": "Deleting.", "shell": BLOCKED}, "done")
    url = base + PATHS[dialect]
    body = first_body(dialect, stream=stream)
    expected = direct.post(url, json=body)
    with through(intercept) as client:
        answer = client.post(url, json=body, headers={"x-session-id": sid})

    assert answer.status_code == 200
    assert without_timestamps(answer.content) == without_timestamps(expected.content)
    assert commands(dialect, decode(dialect, answer)) == [BLOCKED]
    assert len(model.model_requests()) == 2  # no re-ask
    session = intercept.session(sid)
    assert session["hacked"] is True
    (finding,) = session["turns"][0]["findings"]
    assert finding["rule_id"] == RULE and finding["blocked"] is False


def test_other_requests_pass_through_untouched(
    upstreams: Upstreams, enforcing: Intercept, direct: httpx.Client
) -> None:
    _, base = upstreams.prepare("https", "done")
    expected = direct.get(base + "/models")
    with through(enforcing) as client:
        models = client.get(base + "/models")
        missing = client.post(base + "/embeddings", json={"input": "x"})
    assert models.status_code == 200 and models.content == expected.content
    assert missing.status_code == 404


def test_an_unreachable_upstream_is_a_recorded_error(sid: str, enforcing: Intercept) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1" + PATHS["chat"]
    with through(enforcing) as client:
        answer = client.post(closed, json=first_body("chat"), headers={"x-session-id": sid})
    assert answer.status_code == 502
    (turn,) = enforcing.session(sid)["turns"]
    assert turn["status"] == "error" and "could not be reached" in turn["error"]


@pytest.mark.parametrize("stream", [False, True])
def test_the_stop_strategy_answers_later_requests_without_the_upstream(
    sid: str, stream: bool, upstreams: Upstreams, start_intercept: StartIntercept
) -> None:
    intercept = start_intercept("--strategy", "stop")
    model, base = upstreams.prepare("http", {"shell": BLOCKED}, "done")
    url, body = base + PATHS["chat"], first_body("chat", stream=stream)
    with through(intercept) as client:
        answer = decode("chat", client.post(url, json=body, headers={"x-session-id": sid}))
        assert commands("chat", answer) == []
        assert "safeagents stopped this run" in text("chat", answer)
        later = client.post(url, json=body, headers={"x-session-id": sid})
    assert later.status_code == 200
    assert "cannot continue" in text("chat", decode("chat", later))
    assert len(model.model_requests()) == 1
    session = intercept.session(sid)
    assert session["stopped"] is True and session["hacked"] is True


@pytest.mark.parametrize("mode", ["enforce", "monitor"])
def test_an_unreadable_model_request_is_refused_only_when_enforcing(
    mode: str, upstreams: Upstreams, start_intercept: StartIntercept
) -> None:
    intercept = start_intercept(*(["--mode", "monitor"] if mode == "monitor" else []))
    model, base = upstreams.prepare("http", {"shell": BLOCKED})
    with through(intercept) as client:
        answer = client.post(base + PATHS["chat"], content=b"[1, 2]")
    assert answer.status_code == 400
    reached = [request.path for request in model.requests]
    if mode == "enforce":  # no answer safeagents could not check
        assert reached == []
        assert answer.json()["error"]["message"] == "request body must be a JSON object"
    else:
        assert reached == ["/v1/chat/completions"]
