"""Two proxy instances on one PostgreSQL store: either serves any request of a session (its
hidden history travels through the store) and the admin API reads the same sessions from
both (aliases: test_multiproxy.py, on both backends); a store gone away is a clear 503."""

from __future__ import annotations

import psycopg
from proxy_testkit import (
    BLOCKED,
    PATHS,
    RULE,
    StartProxy,
    calls,
    commands,
    conversation_calls,
    decode,
    first_body,
    follow_up,
    http,
    script,
    session_json,
    text,
    tool_results,
)

from safeagents.scripted import ScriptedServer


def test_a_session_moves_between_instances_with_its_hidden_history(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy, postgres_url: str
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, "done"))
    first = start_proxy(scripted.base_url, fresh=True, store=postgres_url, strategy="rewrite")
    second = start_proxy(scripted.base_url, fresh=True, store=postgres_url, strategy="rewrite")
    body = first_body("chat")

    answer = decode("chat", http.post(first.session_url(sid) + PATHS["chat"], json=body))
    (command,) = commands("chat", answer)
    assert RULE in command  # rewritten by the first instance
    printed = f"Blocked by safeagents ({RULE}) ..."
    again = follow_up("chat", body, answer, [printed])
    final = decode("chat", http.post(second.session_url(sid) + PATHS["chat"], json=again))
    assert text("chat", final) == "done"
    seen = scripted.model.model_requests()[-1].body
    assert conversation_calls("chat", seen) == [BLOCKED]  # the second restored the original
    assert tool_results("chat", seen) == [printed]
    for proxy in (first, second):
        session = session_json(proxy.url, sid)
        assert session["hacked"] is True and [t["seq"] for t in session["turns"]] == [1, 2]
        original = calls("chat", session["turns"][0]["response"])[0]
        assert original.arguments == {"command": BLOCKED}


def test_a_store_gone_away_is_a_clear_503_never_an_answer(
    sid: str, scripted: ScriptedServer, start_proxy: StartProxy, postgres_url: str
) -> None:
    scripted.model.set_script(script("done", "done"))
    proxy = start_proxy(scripted.base_url, fresh=True, store=postgres_url)
    url = proxy.session_url(sid) + PATHS["chat"]
    assert http.post(url, json=first_body("chat")).status_code == 200
    database = postgres_url.rpartition("/")[2]
    admin = postgres_url.rpartition("/")[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS false")
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            (database,),
        )
    try:
        reply = http.post(url, json=first_body("chat"))
        assert reply.status_code == 503, reply.text
        assert "safeagents cannot use its store" in reply.json()["error"]["message"]
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS true")
