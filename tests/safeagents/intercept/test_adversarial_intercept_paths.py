"""``safeagents intercept`` routes on canonical paths too: odd spellings of a model endpoint
are checked, writes to model endpoints it cannot check are refused."""

from __future__ import annotations

import httpx
import pytest
from intercept_testkit import Intercept, StartIntercept
from proxy_testkit import BLOCKED, commands, decode, first_body, script

from safeagents.scripted import ScriptedServer


@pytest.fixture(scope="module")
def enforcing(start_intercept: StartIntercept) -> Intercept:
    return start_intercept()


def through(intercept: Intercept) -> httpx.Client:
    return httpx.Client(
        proxy=intercept.proxy, verify=intercept.ssl_context(), timeout=30, trust_env=False
    )


def test_an_odd_spelling_of_a_model_endpoint_is_checked(
    sid: str, plain_upstream: ScriptedServer, enforcing: Intercept
) -> None:
    plain_upstream.model.clear()
    plain_upstream.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}))
    url = plain_upstream.base_url.removesuffix("/v1") + "/v1//chat/completions"
    with through(enforcing) as client:
        answer = client.post(url, json=first_body("chat"), headers={"x-session-id": sid})
    assert answer.status_code == 200, answer.text
    assert commands("chat", decode("chat", answer)) == ["ls"]
    assert enforcing.session(sid)["hacked"] is True


@pytest.mark.parametrize("path", ["/V1/Chat/Completions", "/api/v1/chat/completions"])
def test_model_endpoints_under_other_spellings_and_prefixes_are_recorded(
    sid: str, path: str, plain_upstream: ScriptedServer, enforcing: Intercept
) -> None:
    plain_upstream.model.clear()
    root = plain_upstream.base_url.removesuffix("/v1")
    with through(enforcing) as client:  # the scripted model knows neither spelling: a 404
        answer = client.post(root + path, json=first_body("chat"), headers={"x-session-id": sid})
    assert answer.status_code == 404
    (turn,) = enforcing.session(sid)["turns"]
    assert turn["dialect"] == "chat" and "404" in turn["error"]


@pytest.mark.parametrize("path", ["/v1/completions", "/api/generate", "/v1/messages/batches"])
def test_writes_to_unchecked_model_endpoints_are_refused(
    path: str, plain_upstream: ScriptedServer, enforcing: Intercept
) -> None:
    plain_upstream.model.clear()
    root = plain_upstream.base_url.removesuffix("/v1")
    with through(enforcing) as client:
        answer = client.post(root + path, json=first_body("chat"))
        listed = client.post(root + "/v1/messages/count_tokens", json={"messages": []})
    assert answer.status_code == 404 and "does not check" in answer.text
    assert listed.status_code == 200
    assert [request.path for request in plain_upstream.model.requests] == [
        "/v1/messages/count_tokens"
    ]
