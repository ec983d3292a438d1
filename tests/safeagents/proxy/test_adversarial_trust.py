"""Who may do what (issue 11, items 3 and 4; docs/security.md): health and the start-up line
never show credentials; with a token, model endpoints need a key; session keys that grant
reads are issued by the proxy; the proxy's own credentials never reach the upstream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from proxy_testkit import PATHS, StartProxy, first_body, http, script, serve_workers

from safeagents.cli import main
from safeagents.exchange import Credentials, ProxyConfig, Upstream, redact_url
from safeagents.scripted import ScriptedServer

ADMIN = "/safeagents/v1"
TOKEN = "adm1n-t0ken"
CLIENT = "cl1ent-t0ken"
UPSTREAM_KEY = "sk-upstream-own"
BEARER = {"authorization": f"Bearer {TOKEN}"}


def _with_password(base_url: str) -> str:
    return base_url.replace("http://", "http://user:PASSWORD@", 1) + "?api_key=SECRETQ&x=1"


def _forwarded(scripted: ScriptedServer) -> dict[str, str]:
    return scripted.model.model_requests()[-1].headers


def _open(proxy_url: str, sid: str) -> dict[str, Any]:
    opened = http.put(f"{proxy_url}{ADMIN}/sessions/{sid}", json={"cwd": "/srv"}, headers=BEARER)
    assert opened.status_code == 200, opened.text
    document: dict[str, Any] = opened.json()
    return document


def _chat(url: str, headers: dict[str, str], dialect: str = "chat") -> Any:
    return http.post(url + PATHS[dialect], json=first_body(dialect), headers=headers)


# item 3: health and the start-up line


def test_health_is_liveness_only_without_the_token_and_never_shows_credentials(
    scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    guarded = start_proxy(_with_password(scripted.base_url), admin_token=TOKEN)
    bare = http.get(f"{guarded.url}{ADMIN}/health")
    assert bare.status_code == 200 and bare.json() == {"status": "ok"}
    detailed = http.get(f"{guarded.url}{ADMIN}/health", headers=BEARER)
    assert detailed.json()["strategy"] == "reask"
    assert "PASSWORD" not in detailed.text and "user" not in detailed.text
    assert "SECRETQ" not in detailed.text
    open_proxy = start_proxy(_with_password(scripted.base_url))
    health = http.get(f"{open_proxy.url}{ADMIN}/health").json()
    assert health["upstream"].startswith("http://***@127.0.0.1:")
    assert "PASSWORD" not in str(health)


def test_redaction_masks_userinfo_and_secret_looking_query_values() -> None:
    assert redact_url("https://u:p@h:1/v1?api-key=k&key=2&model=m") == (
        "https://***@h:1/v1?api-key=***&key=***&model=m"
    )
    assert redact_url("http://h/v1?access_token=t&sig=s") == "http://h/v1?access_token=***&sig=***"
    assert "pw" not in redact_url("u:pw@h:80")
    with pytest.raises(ValueError) as refused:
        ProxyConfig(upstream="ftp://user:PASSWORD@h")
    assert "PASSWORD" not in str(refused.value)
    config = ProxyConfig(
        upstream="http://u:PASSWORD@h", admin_token=TOKEN, upstream_api_key=UPSTREAM_KEY
    )
    assert "PASSWORD" not in repr(config) and "mode='enforce'" in repr(config)
    assert TOKEN not in repr(config) and UPSTREAM_KEY not in repr(config)


def test_the_start_up_line_never_prints_credentials(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import safeagents.proxy

    monkeypatch.setattr(safeagents.proxy, "serve", lambda *args, **kwargs: None)
    upstream = "http://user:PASSWORD@127.0.0.1:1/v1?token=SECRETQ"
    assert main(["serve", "--upstream", upstream]) == 0
    err = capsys.readouterr().err
    assert "127.0.0.1:1" in err and "PASSWORD" not in err and "SECRETQ" not in err


# item 4: model endpoints need a key once a token is set


@pytest.mark.parametrize("dialect", ["chat", "responses", "messages"])
def test_a_stranger_cannot_append_turns_to_a_session(
    dialect: str, sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script("done"))
    proxy = start_proxy(scripted.base_url, admin_token=TOKEN)
    victim = proxy.session_url(sid)
    for headers in ({}, {"authorization": "Bearer wrong"}, {"x-api-key": f"sa-{sid}"}):
        refused = _chat(victim, headers, dialect)
        assert refused.status_code == 401, refused.text
        assert refused.json()["type" if dialect == "messages" else "error"]  # its dialect
    assert scripted.model.model_requests() == []
    assert http.get(f"{proxy.url}{ADMIN}/sessions/{sid}", headers=BEARER).status_code == 404
    other_key = _open(proxy.url, sid + "-other")["key"]
    assert _chat(victim, {"x-api-key": other_key}, dialect).status_code == 403
    assert scripted.model.model_requests() == []


def test_pass_through_needs_a_key_too(scripted: ScriptedServer, start_proxy: StartProxy) -> None:
    proxy = start_proxy(scripted.base_url, admin_token=TOKEN)
    assert http.get(f"{proxy.url}/v1/models").status_code == 401
    assert http.get(f"{proxy.url}/v1/models", headers=BEARER).status_code == 200


def test_the_client_token_and_an_issued_key_reach_the_model_with_the_upstreams_own_key(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script("done"))
    proxy = start_proxy(
        scripted.base_url, admin_token=TOKEN, client_token=CLIENT, upstream_api_key=UPSTREAM_KEY
    )
    assert _chat(proxy.session_url(sid), {"authorization": f"Bearer {CLIENT}"}).status_code == 200
    assert _forwarded(scripted)["authorization"] == f"Bearer {UPSTREAM_KEY}"
    key = _open(proxy.url, sid + "-k")["key"]
    assert _chat(proxy.session_url(sid + "-k"), {"x-api-key": key}, "messages").status_code == 200
    forwarded = _forwarded(scripted)
    assert forwarded["x-api-key"] == UPSTREAM_KEY and "authorization" not in forwarded
    assert _chat(proxy.url + "/v1", {"x-api-key": key}).status_code == 200  # the key names it
    session = http.get(f"{proxy.url}{ADMIN}/sessions/{sid}-k?turns=none", headers=BEARER)
    assert session.json()["turn_count"] == 2


@pytest.mark.parametrize("header", ["authorization", "x-api-key"])
def test_the_admin_token_is_never_forwarded_upstream(
    header: str, sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script("done"))
    proxy = start_proxy(scripted.base_url, admin_token=TOKEN)
    value = f"Bearer {TOKEN}" if header == "authorization" else TOKEN
    assert _chat(proxy.session_url(sid), {header: value}).status_code == 200
    assert TOKEN not in str(_forwarded(scripted))
    upstream = Upstream(ProxyConfig(upstream="http://h", admin_token=TOKEN, client_token=CLIENT))
    for incoming in (
        {"Authorization": f"bearer {TOKEN}"},
        {"X-Api-Key": TOKEN},
        {"authorization": f"Bearer {CLIENT}"},
    ):
        for model in (True, False):
            assert set(upstream.headers(incoming, model=model)) <= {"accept-encoding"}
    assert upstream.headers({"authorization": "Bearer sk-own"}, model=True)["authorization"]


def test_the_open_loopback_default_is_unchanged(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script("done"))
    proxy = start_proxy(scripted.base_url)
    assert _chat(proxy.session_url(sid), {"authorization": "Bearer sk-harness"}).status_code == 200
    assert _forwarded(scripted)["authorization"] == "Bearer sk-harness"
    assert http.get(f"{proxy.url}{ADMIN}/sessions/{sid}").status_code == 200


# item 4: reads need a key the proxy issued


def test_a_self_asserted_session_key_grants_no_reads(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script("done"))
    proxy = start_proxy(scripted.base_url, admin_token=TOKEN)
    assert _chat(proxy.session_url(sid), BEARER).status_code == 200
    url = f"{proxy.url}{ADMIN}/sessions/{sid}"
    for forged in (f"sa-{sid}", f"sa-{sid}.{'0' * 32}"):
        assert http.get(url, headers={"authorization": f"Bearer {forged}"}).status_code == 401
    issued = http.get(f"{url}/key", headers=BEARER).json()
    assert issued["session"] == sid and issued["key"].startswith(f"sa-{sid}.")
    own = {"authorization": f"Bearer {issued['key']}"}
    assert http.get(url, headers=own).status_code == 200
    assert [
        s["id"] for s in http.get(f"{proxy.url}{ADMIN}/sessions", headers=own).json()["sessions"]
    ] == [sid]
    assert http.get(f"{proxy.url}{ADMIN}/sessions/someone", headers=own).status_code == 403
    assert http.get(f"{url}/key", headers=own).status_code == 403
    assert http.post(f"{url}/outcome", json={"success": True}, headers=own).status_code == 403
    assert http.get(url, headers={"x-api-key": TOKEN}).status_code == 401  # Bearer only


def test_rules_follow_the_documented_rule(
    scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    guarded = start_proxy(scripted.base_url, admin_token=TOKEN)
    rules = f"{guarded.url}{ADMIN}/rules"
    key = Credentials(ProxyConfig(upstream="http://h", admin_token=TOKEN)).key_for("x")
    assert http.get(rules, headers={"authorization": "Bearer sa-x"}).status_code == 401
    assert http.get(rules, headers={"authorization": f"Bearer {key}"}).status_code == 403
    assert http.get(rules, headers=BEARER).status_code == 200
    open_proxy = start_proxy(scripted.base_url)
    assert http.get(f"{open_proxy.url}{ADMIN}/rules").status_code == 200
    opened = http.get(f"{open_proxy.url}{ADMIN}/rules", headers={"x-api-key": "sa-x"})
    assert opened.status_code == 403


def test_session_keys_are_stable_across_workers_and_restarts(
    sid: str, scripted: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = ProxyConfig(upstream="http://h", admin_token=TOKEN)
    same = Credentials(ProxyConfig.from_json(config.to_json())).key_for(sid)
    assert Credentials(config).key_for(sid) == same
    secret = ProxyConfig(upstream="http://h", admin_token="other", session_secret="s")
    assert Credentials(secret).key_for(sid) == Credentials(
        ProxyConfig(upstream="http://h", client_token=CLIENT, session_secret="s")
    ).key_for(sid)
    monkeypatch.setenv("SAFEAGENTS_ADMIN_TOKEN", TOKEN)
    store, log = str(tmp_path / "w.db"), tmp_path / "serve.log"
    with serve_workers(_with_password(scripted.base_url), store, log) as base:
        key = _open(base, sid)["key"]
        assert key == same
        reads = [
            http.get(f"{base}{ADMIN}/sessions/{sid}", headers={"authorization": f"Bearer {key}"})
            for _ in range(12)
        ]
        assert {read.status_code for read in reads} == {200}
    assert "PASSWORD" not in log.read_text() and TOKEN not in log.read_text()
