"""Per-harness model aliases: the upstream is asked for the alias, turns record who served."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from proxy_testkit import (
    DIALECTS,
    HARNESS,
    PATHS,
    FakeUpstream,
    StartProxy,
    first_body,
    http,
    script,
    session_json,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from safeagents import Firewall
from safeagents.exchange import HARNESS_HEADER, Services, prepare_exchange
from safeagents.protocols import CHAT
from safeagents.proxy import ProxyConfig, ProxyServer
from safeagents.scripted import ScriptedServer
from safeagents.store import SQLiteStore

ALIASES = "/safeagents/v1/aliases"
START = {"pi": "pi-v1", "codex": "codex-v1", "claude": "cc-v1"}


@pytest.fixture
def fake() -> Iterator[FakeUpstream]:
    with FakeUpstream() as server:
        yield server


def _ask(proxy: ProxyServer, sid: str, dialect: str = "chat", **headers: str) -> str:
    """Send a harness's first request (model ``m``); the model the upstream was asked for."""
    reply = http.post(
        proxy.session_url(sid) + PATHS[dialect], json=first_body(dialect), headers=headers
    )
    assert reply.status_code == 200, reply.text
    return str(_upstream_model(proxy, sid))


def _upstream_model(proxy: ProxyServer, sid: str) -> object:
    return session_json(proxy.url, sid)["turns"][-1]["request"]["model"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_dialect_asks_the_upstream_for_its_harness_alias(
    dialect: str, sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script("done"))
    proxy = start_proxy(scripted.base_url, fresh=True, model_aliases=START)
    body = first_body(dialect)
    assert http.post(proxy.session_url(sid) + PATHS[dialect], json=body).status_code == 200
    expected = {"chat": "pi-v1", "responses": "codex-v1", "messages": "cc-v1"}[dialect]
    assert scripted.model.model_requests()[-1].body["model"] == expected
    (turn,) = session_json(proxy.url, sid)["turns"]
    assert turn["harness"] == HARNESS[dialect]
    assert (turn["model"], turn["requested_model"]) == (expected, "m")
    assert turn["request"]["model"] == expected


def test_the_harness_header_picks_the_alias_and_unaliased_harnesses_pass_through(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script("done", "done"))
    proxy = start_proxy(scripted.base_url, fresh=True, model_aliases={"codex": "codex-v1"})
    assert _ask(proxy, sid, **{HARNESS_HEADER: "codex"}) == "codex-v1"
    assert _ask(proxy, sid + "-pi") == "m"


def test_the_turn_records_the_model_that_served_it(
    sid: str, fake: FakeUpstream, start_proxy: StartProxy
) -> None:
    async def answer(request: Request) -> Response:
        body = await request.json()
        if body["messages"][-1]["content"] == "fail":
            return JSONResponse({"error": {"message": "overloaded"}}, status_code=500)
        info = CHAT.parse_request(body)
        return JSONResponse({**CHAT.text_response(info, "hi"), "model": "pi-v1-2024"})

    fake.handler = answer
    proxy = start_proxy(fake.url + "/v1", fresh=True, model_aliases={"pi": "pi-v1"})
    url = proxy.session_url(sid) + PATHS["chat"]
    assert http.post(url, json=first_body("chat")).status_code == 200
    assert http.post(url, json=first_body("chat", "fail")).status_code >= 500
    served, failed = session_json(proxy.url, sid)["turns"]
    assert (served["model"], served["requested_model"]) == ("pi-v1-2024", "m")
    assert failed["status"] == "error" and failed["response"] is None
    assert (failed["model"], failed["requested_model"]) == ("pi-v1", "m")


def test_put_changes_the_next_request_and_delete_restores_pass_through(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script("done", "done", "done"))
    proxy = start_proxy(scripted.base_url, fresh=True, model_aliases={"pi": "pi-v1"})
    assert http.get(proxy.url + ALIASES).json() == {"aliases": {"pi": "pi-v1"}}
    assert _ask(proxy, sid) == "pi-v1"
    put = http.put(f"{proxy.url}{ALIASES}/pi", json={"model": "pi-v2"})
    assert (put.status_code, put.json()) == (200, {"harness": "pi", "model": "pi-v2"})
    assert _ask(proxy, sid) == "pi-v2"
    one = http.get(f"{proxy.url}{ALIASES}/pi-coding-agent")
    assert one.json() == {"harness": "pi", "model": "pi-v2"}
    assert http.delete(f"{proxy.url}{ALIASES}/pi").status_code == 200
    assert _ask(proxy, sid) == "m"
    assert http.get(proxy.url + ALIASES).json() == {"aliases": {}}
    assert http.delete(f"{proxy.url}{ALIASES}/pi").status_code == 404
    assert http.get(f"{proxy.url}{ALIASES}/pi").status_code == 404


def test_bad_alias_requests_are_refused(scripted: ScriptedServer, start_proxy: StartProxy) -> None:
    proxy = start_proxy(scripted.base_url)
    url = f"{proxy.url}{ALIASES}/pi"
    assert http.put(url, content=b"{oops").status_code == 400
    assert http.put(url, json=["pi-v2"]).status_code == 400
    assert http.put(url, json={}).status_code == 400
    assert http.put(url, json={"model": 3}).status_code == 400
    assert http.put(url, json={"model": " "}).status_code == 400
    unknown = http.put(f"{proxy.url}{ALIASES}/nobody", json={"model": "x"})
    assert unknown.status_code == 400 and "nobody" in unknown.json()["error"]["message"]
    assert http.put(url, content=b" " * (65 * 1024)).status_code == 413
    assert http.post(url, json={"model": "x"}).status_code == 405
    assert http.put(proxy.url + ALIASES, json={"model": "x"}).status_code == 405
    assert http.get(proxy.url + ALIASES).json() == {"aliases": {}}


def test_aliases_need_the_admin_token_and_refuse_session_keys(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    guarded = start_proxy(scripted.base_url, admin_token="s3cret")
    admin = {"authorization": "Bearer s3cret"}
    own = {"authorization": f"Bearer sa-{sid}"}
    url = f"{guarded.url}{ALIASES}/pi"
    for headers, status in (({}, 401), ({"authorization": "Bearer wrong"}, 401), (own, 401)):
        assert http.get(guarded.url + ALIASES, headers=headers).status_code == status
        assert http.put(url, json={"model": "x"}, headers=headers).status_code == status
        assert http.delete(url, headers=headers).status_code == status
    assert http.put(url, json={"model": "pi-v9"}, headers=admin).status_code == 200
    assert http.get(guarded.url + ALIASES, headers=admin).json() == {"aliases": {"pi": "pi-v9"}}
    assert http.delete(url, headers=admin).status_code == 200
    open_proxy = start_proxy(scripted.base_url)
    assert http.get(open_proxy.url + ALIASES).status_code == 200
    assert (
        http.put(f"{open_proxy.url}{ALIASES}/pi", json={"model": "x"}, headers=own).status_code
        == 403
    )


def test_start_up_replaces_the_aliases_of_earlier_flags_and_keeps_those_set_at_run_time(
    tmp_path: Path, scripted: ScriptedServer, bundled_firewall: Firewall
) -> None:
    store = str(tmp_path / "restart.db")
    config = ProxyConfig(upstream=scripted.base_url, store=store, model_aliases={"pi": "pi-v1"})
    with ProxyServer(config, firewall=bundled_firewall, port=0) as proxy:
        assert http.put(f"{proxy.url}{ALIASES}/codex", json={"model": "c-v2"}).status_code == 200
    restarted = ProxyConfig(upstream=scripted.base_url, store=store, model_aliases={"claude": "c"})
    with ProxyServer(restarted, firewall=bundled_firewall, port=0) as proxy:
        assert http.get(proxy.url + ALIASES).json() == {
            "aliases": {"claude-code": "c", "codex": "c-v2"}
        }
    with pytest.raises(ValueError, match="nobody"):
        ProxyServer(ProxyConfig(upstream=scripted.base_url, model_aliases={"nobody": "x"}))


def test_the_alias_rewrites_a_copy_and_leaves_the_harness_body_alone(
    bundled_firewall: Firewall,
) -> None:
    async def scenario() -> None:
        config = ProxyConfig(upstream="http://127.0.0.1:1/v1")
        services = Services.build(config, bundled_firewall, SQLiteStore(":memory:"))
        await services.aliases.set("pi", "pi-v3")
        body = first_body("chat")
        ex = await prepare_exchange(
            services,
            CHAT,
            body,
            CHAT.parse_request(body),
            path_id="copy",
            headers={},
            upstream_url="http://127.0.0.1:1/v1/chat/completions",
        )
        assert ex.body is body and body["model"] == "m" and ex.info.model == "m"
        assert ex.upstream_body["model"] == "pi-v3"
        assert ex.upstream_body["messages"] == body["messages"]
        await services.aclose()

    asyncio.run(scenario())
