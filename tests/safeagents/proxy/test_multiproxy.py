"""Issue 16: several proxy instances on one store serve any request of any session.

The instances keep no session state of their own: hidden history, sequence numbers, the
hacked state, the main line and the model aliases live in the store (each test runs on a
SQLite file and on a PostgreSQL database, or on ``$SAFEAGENTS_TEST_STORE``; see
``multiproxy_kit``)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

import httpx
import pytest
from multiproxy_kit import (
    DELIVERED,
    SCRIPT,
    Instances,
    Walk,
    check_history,
    new_session,
    walk_session,
)
from proxy_testkit import PATHS, StartProxy, first_body, follow_up, http, script, serve_process

from safeagents.scripted import ScriptedServer

ADMIN = "/safeagents/v1"


def _document(base: str, session: str) -> dict[str, object]:
    response = http.get(f"{base}{ADMIN}/sessions/{session}")
    assert response.status_code == 200, response.text
    document: dict[str, object] = response.json()
    return document


def _threads(start_proxy: StartProxy, upstream: str, store: str, count: int) -> Instances:
    """``count`` proxies in threads of this process, each with its own store connection."""
    servers = [start_proxy(upstream, fresh=True, store=store) for _ in range(count)]
    return Instances([server.url for server in servers], [None] * count)


def test_turns_of_one_session_on_two_instances_at_once_keep_one_history(
    tmp_path: Path,
    scripted: ScriptedServer,
    start_proxy: StartProxy,
    store_location: str,
) -> None:
    """16 sessions at once; each turn alternates instances, a side request of the session
    goes to the other instance at the same moment, and the last request is sent to both."""
    scripted.model.set_script(script(*SCRIPT))
    instances = _threads(start_proxy, scripted.base_url, store_location, 2)
    sessions = [new_session(f"c{index}") for index in range(16)]

    async def run() -> list[Walk]:
        async with httpx.AsyncClient(timeout=60) as client:
            walks = [
                walk_session(
                    client, instances, session, start=index, side_calls=True, repeat_last=True
                )
                for index, session in enumerate(sessions)
            ]
            return await asyncio.gather(*walks)

    walks = asyncio.run(run())
    for walk in walks:
        assert walk.delivered == DELIVERED, walk.session  # the withheld pair was spliced in
        assert walk.retried == 0
        # main: blocked + re-ask, two more, the last twice; a side turn per main turn
        document = _document(instances.urls[0], walk.session)
        check_history(walk, document, expected_turns=9)
        assert document["tool_calls"] == 3  # the blocked call and the two that passed
        assert [t["kind"] for t in document["turns"]].count("side") == 3  # type: ignore[union-attr]
        other = _document(instances.urls[1], walk.session)
        assert other["turns"] == document["turns"]


def test_an_alias_set_through_one_instance_is_used_by_the_next_request_of_another(
    tmp_path: Path,
    scripted: ScriptedServer,
    start_proxy: StartProxy,
    store_location: str,
) -> None:
    scripted.model.set_script(script("done"))
    first, second = _threads(start_proxy, scripted.base_url, store_location, 2).urls
    url = f"{second}/s/{new_session('alias')}/v1{PATHS['chat']}"
    assert http.post(url, json=first_body("chat")).status_code == 200
    for model in ("pi-v1", "pi-v2"):
        assert http.put(f"{first}{ADMIN}/aliases/pi", json={"model": model}).status_code == 200
        assert http.post(url, json=first_body("chat")).status_code == 200
        assert scripted.model.model_requests()[-1].body["model"] == model
        assert http.get(f"{second}{ADMIN}/aliases").json() == {"aliases": {"pi": model}}
    assert http.delete(f"{second}{ADMIN}/aliases/pi").status_code == 200
    assert (
        http.post(
            f"{first}/s/{new_session('alias')}/v1{PATHS['chat']}", json=first_body("chat")
        ).status_code
        == 200
    )
    assert scripted.model.model_requests()[-1].body["model"] == "m"
    assert [r.body["model"] for r in scripted.model.model_requests()] == [
        "m",
        "pi-v1",
        "pi-v2",
        "m",
    ]


def test_a_restarted_instance_applies_its_flags_and_keeps_an_alias_set_at_run_time(
    tmp_path: Path,
    scripted: ScriptedServer,
    start_proxy: StartProxy,
    store_location: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An alias set through the admin API (a trainer's published adapter) outlives the
    restart of any instance; flags apply to the aliases earlier flags set."""
    scripted.model.set_script(script("done"))
    store = store_location
    flags = {"pi": "pi-base", "codex": "codex-base"}
    first = start_proxy(scripted.base_url, fresh=True, store=store, model_aliases=flags)
    second = start_proxy(scripted.base_url, fresh=True, store=store, model_aliases=flags)
    assert http.put(f"{second.url}{ADMIN}/aliases/pi", json={"model": "pi-v7"}).status_code == 200
    second.stop()
    changed = {"pi": "pi-base2", "codex": "codex-base2"}  # the operator changed the flags
    second = start_proxy(scripted.base_url, fresh=True, store=store, model_aliases=changed)
    expected = {"codex": "codex-base2", "pi": "pi-v7"}
    for instance in (first, second):
        assert http.get(f"{instance.url}{ADMIN}/aliases").json() == {"aliases": expected}
        url = f"{instance.url}/s/{new_session('restart')}/v1{PATHS['chat']}"
        assert http.post(url, json=first_body("chat")).status_code == 200
        assert scripted.model.model_requests()[-1].body["model"] == "pi-v7"
    assert any("--model-alias pi=pi-base2 not applied" in r.getMessage() for r in caplog.records)
    assert http.delete(f"{first.url}{ADMIN}/aliases/pi").status_code == 200
    second.stop()
    second = start_proxy(scripted.base_url, fresh=True, store=store, model_aliases=changed)
    url = f"{first.url}/s/{new_session('restart')}/v1{PATHS['chat']}"
    assert http.post(url, json=first_body("chat")).status_code == 200
    assert scripted.model.model_requests()[-1].body["model"] == "pi-base2"


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_the_survivors_continue_every_session_after_one_of_three_is_killed(
    tmp_path: Path,
    scripted: ScriptedServer,
    store_location: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """64 sessions over three ``safeagents serve`` processes; once a third of the requests
    are answered, one instance is killed with SIGKILL while requests wait in it for the
    (slow) model. Every session finishes on the others, with its whole history and no
    answered turn lost."""
    scripted.model.set_script(script(*SCRIPT))
    monkeypatch.setattr(scripted.model, "reply_delay", 0.2)  # requests sit in the proxies
    with contextlib.ExitStack() as stack:
        started = [
            stack.enter_context(
                serve_process(
                    scripted.base_url,
                    store_location,
                    tmp_path / f"serve{index}.log",
                    ready_within=120,
                )
            )
            for index in range(3)
        ]
        instances = Instances([base for _, base in started], [p.pid for p, _ in started])
        walks = [Walk(new_session(f"k{index}")) for index in range(64)]
        at_kill: list[tuple[int, int]] = []

        async def kill_under_load(running: list[asyncio.Future[Walk]]) -> None:
            answered = 0
            while answered < 64 or instances.in_flight[0] < _IN_FLIGHT_AT_KILL:
                assert not all(task.done() for task in running)
                await asyncio.sleep(0.002)
                answered = sum(len(walk.answered) for walk in walks)
            at_kill.append((answered, instances.in_flight[0]))
            instances.kill(0)

        async def run() -> None:
            limits = httpx.Limits(max_connections=64)
            async with httpx.AsyncClient(timeout=60, limits=limits) as client:
                running = [
                    asyncio.ensure_future(
                        walk_session(client, instances, w.session, start=index, pause=0.01, walk=w)
                    )
                    for index, w in enumerate(walks)
                ]
                await kill_under_load(running)
                await asyncio.gather(*running)

        asyncio.run(run())
        started[0][0].wait(5)
        assert started[0][0].returncode == -9
        [(answered, in_flight)] = at_kill
        assert answered < 64 * 3 and in_flight >= _IN_FLIGHT_AT_KILL
        for walk in walks:
            assert walk.delivered == DELIVERED, walk.session
            check_history(walk, _document(instances.urls[1], walk.session), expected_turns=None)
        # the requests in flight to the killed instance (but an answer it had already sent)
        # failed and went to another
        assert sum(walk.retried for walk in walks) > 0, "the kill interrupted nothing"


_IN_FLIGHT_AT_KILL = 4
"""Requests the client has sent to the instance it kills and not had answered yet."""


def test_a_finding_revealed_through_one_instance_is_not_reported_again_by_another(
    tmp_path: Path,
    scripted: ScriptedServer,
    start_proxy: StartProxy,
    store_location: str,
) -> None:
    """Each instance rebuilds the session's state from the conversation it gets, so each
    reveals the deleted test again: the one that did not report it first finds it stored."""
    write = "cat > tests/test_limits.py <<'EOF'\ndef test_limit():\n    assert True\nEOF"
    steps = ({"shell": write}, {"shell": "rm tests/test_limits.py"}, {"shell": "git status"})
    scripted.model.set_script(script(*steps, {"shell": "ls"}, {"shell": "pwd"}, "done"))
    urls = _threads(start_proxy, scripted.base_url, store_location, 2).urls
    session = new_session("revealed")
    git = "Changes not staged for commit:\n\tdeleted:    tests/test_limits.py\n"
    body = first_body("chat")
    for turn, output in enumerate(["", "", git, "a b", "/workspace"]):
        url = f"{urls[turn % 2]}/s/{session}/v1{PATHS['chat']}"
        answer = http.post(url, json=body).json()
        body = follow_up("chat", body, answer, [output])
    final = http.post(f"{urls[1]}/s/{session}/v1{PATHS['chat']}", json=body).json()
    assert final["choices"][0]["message"]["content"] == "done"
    document = _document(urls[0], session)
    assert document["hacked"] is True
    (finding,) = document["findings"]  # type: ignore[misc]
    assert finding["rule_id"] == "test-file-deletion" and "revealed later" in finding["summary"]
