"""The default strategy, re-ask and splice, in all three dialects, streamed and not."""

from __future__ import annotations

import pytest
from proxy_testkit import (
    BLOCKED,
    DIALECTS,
    HARNESS,
    PATHS,
    RULE,
    StartProxy,
    commands,
    conversation_calls,
    decode,
    finish_reason,
    first_body,
    follow_up,
    http,
    script,
    session_json,
    side_body,
    text,
    tool_results,
)

from safeagents.scripted import ScriptedServer

CASES = [(dialect, stream) for dialect in DIALECTS for stream in (False, True)]
TOOL_FINISH = ("tool_calls", "tool_use")


@pytest.mark.parametrize(("dialect", "stream"), CASES)
def test_blocked_call_is_withheld_reasked_and_spliced_into_later_requests(
    sid: str, dialect: str, stream: bool, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(
        script({"say": "Deleting the test.", "shell": BLOCKED}, {"shell": "ls"}, "done")
    )
    proxy = start_proxy(scripted.base_url)
    url = proxy.session_url(sid) + PATHS[dialect]
    body = first_body(dialect, stream=stream)

    answer = decode(dialect, http.post(url, json=body))
    assert commands(dialect, answer) == ["ls"]
    assert finish_reason(dialect, answer) in TOOL_FINISH
    first, reask = scripted.model.model_requests()
    assert first.stream is stream and reask.stream is False
    assert conversation_calls(dialect, reask.body) == [BLOCKED]
    assert RULE in tool_results(dialect, reask.body)[0]

    later = follow_up(dialect, body, answer, ["file_a.py"])
    final = decode(dialect, http.post(url, json=later))
    assert text(dialect, final) == "done"
    seen = scripted.model.model_requests()[-1].body
    assert conversation_calls(dialect, seen) == [BLOCKED, "ls"]
    results = tool_results(dialect, seen)
    assert RULE in results[0] and results[1] == "file_a.py"

    session = session_json(proxy.url, sid)
    assert session["hacked"] is True and session["harness"] == HARNESS[dialect]
    assert [f["rule_id"] for f in session["findings"]] == [RULE]
    assert [t["kind"] for t in session["turns"]] == ["main", "reask", "main"]
    assert session["turns"][2]["request"] == seen  # recorded as the upstream saw it


@pytest.mark.parametrize(("dialect", "stream"), CASES)
def test_mixed_turn_lets_the_allowed_call_through(
    sid: str, dialect: str, stream: bool, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"parallel": [{"shell": BLOCKED}, {"shell": "ls"}]}, "ok"))
    proxy = start_proxy(scripted.base_url)
    url = proxy.session_url(sid) + PATHS[dialect]
    body = first_body(dialect, stream=stream)

    answer = decode(dialect, http.post(url, json=body))
    assert commands(dialect, answer) == ["ls"]
    assert finish_reason(dialect, answer) in TOOL_FINISH
    assert len(scripted.model.model_requests()) == 1  # nothing to re-ask: the run goes on

    final = decode(dialect, http.post(url, json=follow_up(dialect, body, answer, ["out"])))
    assert text(dialect, final) == "ok"
    seen = scripted.model.model_requests()[-1].body
    assert conversation_calls(dialect, seen) == [BLOCKED, "ls"]
    results = tool_results(dialect, seen)
    assert RULE in results[0] and results[1] == "out"


@pytest.mark.parametrize(("dialect", "stream"), CASES)
def test_exhausted_reasks_end_the_run_with_an_explanation(
    sid: str, dialect: str, stream: bool, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script(*[{"shell": BLOCKED}] * 5, "never reached"))
    proxy = start_proxy(scripted.base_url, max_reasks=2)
    url = proxy.session_url(sid) + PATHS[dialect]

    answer = decode(dialect, http.post(url, json=first_body(dialect, stream=stream)))
    assert commands(dialect, answer) == []
    assert finish_reason(dialect, answer) in ("stop", "end_turn")
    assert "safeagents blocked" in text(dialect, answer) and RULE in text(dialect, answer)
    requests = scripted.model.model_requests()
    assert len(requests) == 3
    assert conversation_calls(dialect, requests[-1].body) == [BLOCKED, BLOCKED]
    session = session_json(proxy.url, sid)
    assert [t["kind"] for t in session["turns"]] == ["main", "reask", "reask"]
    assert len(session["findings"]) == 3 and session["tool_calls"] == 3


@pytest.mark.parametrize("dialect", DIALECTS)
def test_side_calls_are_recorded_but_never_spliced(
    sid: str, dialect: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}, "done"))
    proxy = start_proxy(scripted.base_url)
    url = proxy.session_url(sid) + PATHS[dialect]
    body = first_body(dialect)
    answer = decode(dialect, http.post(url, json=body))

    title = http.post(url, json=side_body(dialect))
    assert title.status_code == 200
    assert conversation_calls(dialect, scripted.model.model_requests()[-1].body) == []

    decode(dialect, http.post(url, json=follow_up(dialect, body, answer, ["x"])))
    seen = scripted.model.model_requests()[-1].body
    assert conversation_calls(dialect, seen) == [BLOCKED, "ls"]
    kinds = [t["kind"] for t in session_json(proxy.url, sid)["turns"]]
    assert kinds == ["main", "reask", "side", "main"]
