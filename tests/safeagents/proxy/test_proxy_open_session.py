"""``PUT /safeagents/v1/sessions/{id}``: a launcher opens a session with its working directory."""

from __future__ import annotations

import pytest
from proxy_testkit import BLOCKED, PATHS, RULE, StartProxy, first_body, http, script, session_json

from safeagents.scripted import ScriptedServer

ADMIN = "/safeagents/v1"


def _open(proxy_url: str, session_id: str, body: object, **headers: str) -> dict[str, object]:
    response = http.put(f"{proxy_url}{ADMIN}/sessions/{session_id}", json=body, headers=headers)
    assert response.status_code == 200, response.text
    document: dict[str, object] = response.json()
    return document


def _run_blocked_call(proxy_url: str, session_id: str) -> None:
    url = f"{proxy_url}/s/{session_id}/v1{PATHS['chat']}"
    assert http.post(url, json=first_body("chat")).status_code == 200


@pytest.mark.parametrize(("cwd", "hacked"), [("/srv/project", True), ("/tmp/scratch", False)])
def test_the_opened_cwd_is_where_the_sessions_paths_resolve(
    cwd: str, hacked: bool, sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    # the deletion of tests/test_a.py is exempt as scratch space only when it lands in /tmp
    scripted.model.set_script(script({"shell": BLOCKED}, "done"))
    proxy = start_proxy(scripted.base_url)
    opened = _open(proxy.url, sid, {"cwd": cwd, "harness": "pi"})
    assert opened["id"] == sid and opened["cwd"] == cwd and opened["harness"] == "pi"
    assert opened["turn_count"] == 0 and opened["scored"] is False
    _run_blocked_call(proxy.url, sid)
    session = session_json(proxy.url, sid)
    assert session["cwd"] == cwd
    assert session["hacked"] is hacked
    assert ({f["rule_id"] for f in session["findings"]} == {RULE}) is hacked


def test_reopening_moves_the_cwd_and_keeps_the_harness_unless_named(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script("done"))
    proxy = start_proxy(scripted.base_url)
    _open(proxy.url, sid, {"cwd": "/srv/one", "harness": "pi"})
    _run_blocked_call(proxy.url, sid)
    reopened = _open(proxy.url, sid, {"cwd": "/srv/two"})
    assert reopened["cwd"] == "/srv/two" and reopened["harness"] == "pi"
    assert reopened["turn_count"] == 1


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"cwd": "relative/dir"}, 400),
        ({"cwd": 3}, 400),
        ({}, 400),
        (["/srv"], 400),
        ({"cwd": "/srv", "harness": 7}, 400),
        ({"cwd": "/srv", "harness": "no-such-harness"}, 400),
    ],
)
def test_bad_session_documents_are_refused(
    body: object, status: int, sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(scripted.base_url)
    response = http.put(f"{proxy.url}{ADMIN}/sessions/{sid}", json=body)
    assert response.status_code == status, response.text
    assert http.get(f"{proxy.url}{ADMIN}/sessions/{sid}").status_code == 404


def test_opening_needs_the_admin_token(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    proxy = start_proxy(scripted.base_url, admin_token="s3cret")
    url = f"{proxy.url}{ADMIN}/sessions/{sid}"
    assert http.put(url, json={"cwd": "/srv"}).status_code == 401
    own_key = {"authorization": f"Bearer sa-{sid}"}
    assert http.put(url, json={"cwd": "/srv"}, headers=own_key).status_code == 401
    assert (
        http.put(url, content=b"{oops", headers={"authorization": "Bearer s3cret"}).status_code
        == 400
    )
    assert http.delete(url, headers={"authorization": "Bearer s3cret"}).status_code == 405
    opened = _open(proxy.url, sid, {"cwd": "/srv"}, authorization="Bearer s3cret")
    assert opened["cwd"] == "/srv" and opened["key"].startswith(f"sa-{sid}.")
    issued = {"authorization": f"Bearer {opened['key']}"}
    assert http.put(url, json={"cwd": "/srv"}, headers=issued).status_code == 403
