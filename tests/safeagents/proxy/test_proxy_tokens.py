"""--capture-tokens: token ids and logprobs recorded per attempt, stripped for the harness."""

from __future__ import annotations

import pytest
from proxy_testkit import (
    BLOCKED,
    PATHS,
    StartProxy,
    commands,
    decode,
    first_body,
    http,
    script,
    session_json,
)

from safeagents.scripted import ScriptedServer


@pytest.mark.parametrize("stream", [False, True])
def test_tokens_are_captured_for_every_attempt_and_stripped(
    stream: bool, sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}))
    proxy = start_proxy(scripted.base_url, capture_tokens=True)
    response = http.post(
        proxy.session_url(sid) + PATHS["chat"], json=first_body("chat", stream=stream)
    )
    assert "token_ids" not in response.text and '"logprob"' not in response.text
    answer = decode("chat", response)
    assert commands("chat", answer) == ["ls"]
    assert answer["choices"][0]["logprobs"] is None
    for request in scripted.model.model_requests():
        assert request.body["return_token_ids"] is True and request.body["logprobs"] is True
    turns = session_json(proxy.url, sid)["turns"]
    assert [t["kind"] for t in turns] == ["main", "reask"]
    for turn in turns:
        tokens = turn["tokens"]
        assert tokens["prompt_token_ids"] and tokens["completion_token_ids"]
        assert len(tokens["logprobs"]) == len(tokens["completion_token_ids"])
        assert all(isinstance(value, float) and value < 0 for value in tokens["logprobs"])
    assert turns[0]["tokens"] != turns[1]["tokens"]


def test_logprobs_the_harness_asked_for_are_kept(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": "ls"}))
    proxy = start_proxy(scripted.base_url, capture_tokens=True)
    body = {**first_body("chat"), "logprobs": True}
    answer = http.post(proxy.session_url(sid) + PATHS["chat"], json=body).json()
    assert answer["choices"][0]["logprobs"]["content"]
    assert "prompt_token_ids" not in answer


def test_without_capture_nothing_is_asked_or_recorded(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": "ls"}))
    proxy = start_proxy(scripted.base_url)
    http.post(proxy.session_url(sid) + PATHS["chat"], json=first_body("chat"))
    assert "return_token_ids" not in scripted.model.model_requests()[0].body
    assert session_json(proxy.url, sid)["turns"][0]["tokens"] is None
