"""Who may do what, for ``safeagents intercept`` (issue 11, item 4; docs/security.md): it has
no admin API and no token of its own; the harness's own API key goes to the API it addresses,
but no ``sa-`` session key of the proxy leaves it, on the first leg or on a re-ask."""

from __future__ import annotations

import httpx
from intercept_testkit import Intercept, StartIntercept
from proxy_testkit import PATHS, commands, decode, first_body, script

from safeagents.scripted import ScriptedServer

SESSION_KEY = "sa-someone." + "0" * 32


def test_session_keys_never_reach_the_upstream(
    sid: str, plain_upstream: ScriptedServer, start_intercept: StartIntercept
) -> None:
    intercept: Intercept = start_intercept()
    model = plain_upstream.model
    model.clear()
    model.set_script(script({"shell": "rm tests/test_x.py"}, {"shell": "ls"}, "done"))
    headers = {"x-session-id": sid, "authorization": f"Bearer {SESSION_KEY}", "x-api-key": "sk-own"}
    with httpx.Client(proxy=intercept.proxy, timeout=30, trust_env=False) as client:
        answer = client.post(
            plain_upstream.base_url + PATHS["chat"], json=first_body("chat"), headers=headers
        )
    assert commands("chat", decode("chat", answer)) == ["ls"]
    first, reask = model.model_requests()
    for sent in (first.headers, reask.headers):
        assert "sa-" not in sent.get("authorization", "") and sent["x-api-key"] == "sk-own"
