"""The admin API, its access rules, Prometheus metrics and the sink plugin hooks."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from proxy_testkit import BLOCKED, PATHS, RULE, StartProxy, first_body, http, script, session_json

from safeagents import Firewall
from safeagents._audit import SessionReport
from safeagents._registry import load_registry
from safeagents.plugins import hookimpl
from safeagents.scripted import ScriptedServer
from safeagents.store import SessionRecord, TurnRecord

ADMIN = "/safeagents/v1"
FINDING_KEYS = {"rule_id", "category", "severity", "action", "tool_call_id", "tool", "summary"}


def _hack(proxy_url: str, session_id: str, headers: dict[str, str] | None = None) -> None:
    url = f"{proxy_url}/s/{session_id}/v1{PATHS['chat']}"
    assert http.post(url, json=first_body("chat"), headers=headers).status_code == 200


def test_sessions_carry_the_check_report_shape_and_their_turns(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy, store_location: str
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}))
    proxy = start_proxy(scripted.base_url, fresh=True, store=store_location)
    _hack(proxy.url, sid)
    session = session_json(proxy.url, sid)
    assert set(SessionReport(id="x", harness="pi").to_json()) <= set(session)
    assert session["id"] == sid and session["hacked"] is True and session["tool_calls"] == 2
    assert [set(f) for f in session["findings"]] == [FINDING_KEYS]
    assert [t["seq"] for t in session["turns"]] == [1, 2]
    assert session["turns"][0]["findings"][0]["message"].startswith("Blocked by safeagents")
    listed = http.get(f"{proxy.url}{ADMIN}/sessions").json()["sessions"]
    assert sid in {s["id"] for s in listed}
    odd = {"limit": "\u00b2", "offset": "9" * 5000}  # a digit int() refuses; past int's limit
    assert http.get(f"{proxy.url}{ADMIN}/sessions", params=odd).json() == {"sessions": []}
    assert http.get(f"{proxy.url}{ADMIN}/sessions", params={"limit": "\u00b2"}).json() == {
        "sessions": listed
    }
    brief = http.get(f"{proxy.url}{ADMIN}/sessions/{sid}?turns=none").json()
    assert "turns" not in brief and brief["turn_count"] == 2


def test_outcome_missing_means_not_scored_never_zero(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy, store_location: str
) -> None:
    scripted.model.set_script(script("done"))
    proxy = start_proxy(scripted.base_url, fresh=True, store=store_location)
    _hack(proxy.url, sid)
    before = session_json(proxy.url, sid)
    assert before["scored"] is False and before["outcome"] is None
    url = f"{proxy.url}{ADMIN}/sessions/{sid}/outcome"
    posted = http.post(url, json={"success": True, "reward": 1.0})
    assert posted.status_code == 200 and posted.json()["outcome"]["reward"] == 1.0
    assert session_json(proxy.url, sid)["scored"] is True
    assert http.post(url, json=[1]).status_code == 400
    assert http.post(url, content=b"{oops").status_code == 400
    assert http.get(url).status_code == 405
    missing = http.post(f"{proxy.url}{ADMIN}/sessions/nobody/outcome", json={"success": False})
    assert missing.status_code == 404


def test_rules_health_and_metrics(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}))
    proxy = start_proxy(scripted.base_url)
    _hack(proxy.url, sid)
    streamed = http.post(
        proxy.session_url(sid) + PATHS["chat"], json=first_body("chat", stream=True)
    )
    assert streamed.status_code == 200
    rules = http.get(f"{proxy.url}{ADMIN}/rules").json()["rules"]
    assert RULE in {rule["id"] for rule in rules}
    health = http.get(f"{proxy.url}{ADMIN}/health").json()
    assert health["status"] == "ok" and health["strategy"] == "reask"
    metrics = http.get(f"{proxy.url}/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    sample = re.compile(r'^[a-z_]+(\{([a-z_]+="[^"]*",?)*\})? -?[0-9.e+]+$')
    lines = [line for line in metrics.text.splitlines() if not line.startswith("#")]
    assert lines and all(sample.match(line) for line in lines), lines
    assert f'safeagents_findings_total{{action="reject",rule_id="{RULE}"}}' in metrics.text
    assert 'safeagents_requests_total{dialect="chat",kind="main",status="ok"}' in metrics.text
    assert "\nsafeagents_in_flight_requests 0\n" in metrics.text


def test_admin_token_guards_everything_but_health(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy, store_location: str
) -> None:
    scripted.model.set_script(script("done"))
    proxy = start_proxy(scripted.base_url, admin_token="s3cret", fresh=True, store=store_location)
    admin = {"authorization": "Bearer s3cret"}
    _hack(proxy.url, sid, admin)
    sessions = f"{proxy.url}{ADMIN}/sessions"
    own = {
        "authorization": f"Bearer {http.get(f'{sessions}/{sid}/key', headers=admin).json()['key']}"
    }
    other = {
        "authorization": f"Bearer {http.get(f'{sessions}/else/key', headers=admin).json()['key']}"
    }
    assert http.get(f"{proxy.url}{ADMIN}/health").status_code == 200
    assert http.get(sessions).status_code == 401
    assert http.get(sessions, headers={"authorization": "Bearer wrong"}).status_code == 401
    assert http.get(sessions, headers=admin).status_code == 200
    assert http.get(f"{sessions}/{sid}").status_code == 401
    assert http.get(f"{sessions}/{sid}", headers={"x-api-key": f"sa-{sid}"}).status_code == 401
    assert http.get(f"{sessions}/{sid}", headers=other).status_code == 403
    assert http.get(f"{sessions}/{sid}", headers=own).status_code == 200
    assert [s["id"] for s in http.get(sessions, headers=own).json()["sessions"]] == [sid]
    outcome = f"{sessions}/{sid}/outcome"
    assert http.post(outcome, json={"success": True}, headers=own).status_code == 403
    assert http.post(outcome, json={"success": True}, headers=admin).status_code == 200
    assert http.get(f"{proxy.url}/metrics").status_code == 401
    assert http.get(f"{proxy.url}/metrics", headers=admin).status_code == 200


def test_without_a_token_a_session_key_still_reads_only_its_own_session(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script("done"))
    proxy = start_proxy(scripted.base_url)
    _hack(proxy.url, sid)
    url = f"{proxy.url}{ADMIN}/sessions/{sid}"
    assert http.get(url).status_code == 200
    assert http.get(url, headers={"authorization": "Bearer sa-intruder"}).status_code == 403


class _Sink:
    def __init__(self) -> None:
        self.turns: list[TurnRecord] = []
        self.closed: list[SessionRecord] = []

    @hookimpl
    def turn_recorded(self, turn: TurnRecord) -> None:
        self.turns.append(turn)

    @hookimpl
    def session_closed(self, session: SessionRecord) -> None:
        self.closed.append(session)


def _eventually(check: Any) -> None:
    deadline = time.monotonic() + 5
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.mark.parametrize("stream", [False, True])
def test_sinks_receive_recorded_turns_and_closed_sessions(
    stream: bool, sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    sink = _Sink()
    firewall = Firewall.load(registry=load_registry(plugins=[sink]))
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}))
    proxy = start_proxy(scripted.base_url, firewall=firewall, capture_tokens=stream)
    url = f"{proxy.url}/s/{sid}/v1{PATHS['chat']}"
    assert http.post(url, json=first_body("chat", stream=stream)).status_code == 200
    _eventually(lambda: len(sink.turns) == 2)
    assert [(t.kind, t.session_id) for t in sink.turns] == [("main", sid), ("reask", sid)]
    assert sink.turns[0].findings[0].rule_id == RULE
    http.post(f"{proxy.url}{ADMIN}/sessions/{sid}/outcome", json={"reward": 0.0})
    _eventually(lambda: len(sink.closed) == 1)
    assert sink.closed[0].outcome == {"reward": 0.0} and sink.closed[0].hacked is True
