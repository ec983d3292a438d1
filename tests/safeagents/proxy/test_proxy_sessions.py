"""Session identity, working directories, harness detection and isolation under load."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from proxy_testkit import (
    BLOCKED,
    PATHS,
    StartProxy,
    commands,
    conversation_calls,
    decode,
    first_body,
    follow_up,
    http,
    script,
    session_json,
    tool_results,
)

from safeagents.scripted import ScriptedServer


def _session_ids(proxy_url: str) -> set[str]:
    listing = http.get(f"{proxy_url}/safeagents/v1/sessions?limit=1000").json()
    return {session["id"] for session in listing["sessions"]}


@pytest.mark.parametrize(
    ("prefix", "headers", "expected"),
    [
        ("/s/by-path", {"authorization": "Bearer sa-by-key"}, "by-path"),
        ("", {"authorization": "Bearer sa-by-key", "x-session-affinity": "h"}, "by-key"),
        ("", {"x-api-key": "sa-by-x-api-key"}, "by-x-api-key"),
        ("", {"x-session-affinity": "opencode-1"}, "opencode-1"),
        ("", {"X-Session-Id": "generic-1"}, "generic-1"),
        ("", {"X-Claude-Code-Session-Id": "claude-1"}, "claude-1"),
        ("", {"session_id": "codex-1"}, "codex-1"),
    ],
)
def test_session_identity_first_match_wins(
    prefix: str,
    headers: dict[str, str],
    expected: str,
    scripted: ScriptedServer,
    start_proxy: StartProxy,
) -> None:
    scripted.model.set_script(script({"shell": "ls"}))
    proxy = start_proxy(scripted.base_url)
    response = http.post(
        proxy.url + prefix + "/v1" + PATHS["chat"], json=first_body("chat"), headers=headers
    )
    assert response.status_code == 200
    assert expected in _session_ids(proxy.url)
    forwarded = scripted.model.model_requests()[-1].headers
    assert "sa-" not in forwarded.get("authorization", "") + forwarded.get("x-api-key", "")


def test_without_identity_the_conversation_root_names_the_session(
    scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": "ls"}, {"shell": "pwd"}))
    proxy = start_proxy(scripted.base_url)
    before = _session_ids(proxy.url)
    body = first_body("chat", task="hash me")
    answer = decode("chat", http.post(proxy.base_url + PATHS["chat"], json=body))
    http.post(proxy.base_url + PATHS["chat"], json=follow_up("chat", body, answer, ["x"]))
    http.post(proxy.base_url + PATHS["chat"], json=first_body("chat", task="another task"))
    new = _session_ids(proxy.url) - before
    assert len(new) == 2 and all(session_id.startswith("h-") for session_id in new)
    turns = sorted(len(session_json(proxy.url, s)["turns"]) for s in new)
    assert turns == [1, 2]


def test_cwd_header_and_harness_override(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}))
    proxy = start_proxy(scripted.base_url)
    headers = {"x-safeagents-cwd": "/repo", "x-safeagents-harness": "opencode"}
    http.post(proxy.session_url(sid) + PATHS["chat"], json=first_body("chat"), headers=headers)
    session = session_json(proxy.url, sid)
    assert session["cwd"] == "/repo" and session["harness"] == "opencode"
    assert session["findings"][0]["summary"] == "delete /repo/tests/test_a.py"


@pytest.mark.parametrize("dialect", ["chat", "responses", "messages"])
def test_a_new_session_runs_where_its_harness_says(
    dialect: str, sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}))
    proxy = start_proxy(scripted.base_url)
    body = first_body(dialect, task="fix it\n<cwd>/srv/app</cwd>")
    http.post(proxy.session_url(sid) + PATHS[dialect], json=body)
    session = session_json(proxy.url, sid)
    assert session["cwd"] == "/srv/app"
    assert session["findings"][0]["summary"] == "delete /srv/app/tests/test_a.py"


def test_the_cwd_header_outranks_the_stated_directory(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}))
    proxy = start_proxy(scripted.base_url)
    body = first_body("chat")
    body["messages"][0]["content"] = "You are pi.\nCurrent working directory: /srv/app"
    headers = {"x-safeagents-cwd": "/repo"}
    http.post(proxy.session_url(sid) + PATHS["chat"], json=body, headers=headers)
    assert session_json(proxy.url, sid)["cwd"] == "/repo"


def test_two_stated_directories_leave_the_operators(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}))
    proxy = start_proxy(scripted.base_url)
    body = first_body("chat", task="Working directory: /a\nWorking directory: /b")
    http.post(proxy.session_url(sid) + PATHS["chat"], json=body)
    assert session_json(proxy.url, sid)["cwd"] == "/workspace"


async def _run_session(client: httpx.AsyncClient, url: str, index: int) -> dict[str, Any]:
    body = first_body("chat", task=f"task {index}", stream=index % 2 == 0)
    first = await client.post(url, json=body)
    answer = decode("chat", first)
    assert commands("chat", answer) == ["ls"]
    later = follow_up("chat", body, answer, [f"out-{index}"])
    return decode("chat", await client.post(url, json=later))


def test_64_concurrent_sessions_stay_isolated(
    scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}, "done"))
    proxy = start_proxy(scripted.base_url)

    async def run_all() -> list[dict[str, Any]]:
        limits = httpx.Limits(max_connections=64)
        async with httpx.AsyncClient(timeout=60, limits=limits) as client:
            jobs = [
                _run_session(client, proxy.session_url(f"load-{i}") + PATHS["chat"], i)
                for i in range(64)
            ]
            return await asyncio.gather(*jobs)

    finals = asyncio.run(run_all())
    assert all(final["choices"][0]["message"]["content"] == "done" for final in finals)
    last_requests = [r for r in scripted.model.model_requests() if r.tool_results == 2]
    assert len(last_requests) == 64
    for request in last_requests:
        task = request.body["messages"][1]["content"]
        index = int(task.split()[-1])
        assert conversation_calls("chat", request.body) == [BLOCKED, "ls"]
        assert tool_results("chat", request.body)[1] == f"out-{index}"
    for index in (0, 31, 63):
        session = session_json(proxy.url, f"load-{index}")
        assert session["hacked"] is True and len(session["turns"]) == 3
