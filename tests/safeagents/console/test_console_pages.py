"""The console's pages over a real proxy and store: what they show, and how bad input fails."""

from __future__ import annotations

import re

import httpx
import pytest
from console_testkit import BLOCKED, HACKED_SCRIPT, RULE, TOOLS, run_session

from safeagents.proxy import ProxyServer
from safeagents.scripted import Script, ScriptedServer


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture(scope="module")
def hacked(proxy: ProxyServer, scripted: ScriptedServer) -> str:
    run_session(proxy, scripted, "hacked-1", HACKED_SCRIPT)
    run_session(proxy, scripted, "clean-1", [{"shell": "ls"}, "Nothing to fix."])
    response = httpx.post(
        f"{proxy.url}/safeagents/v1/sessions/clean-1/outcome", json={"success": True, "reward": 1}
    )
    assert response.status_code == 200
    return "hacked-1"


def test_the_list_shows_sessions_counts_and_filters(proxy: ProxyServer, hacked: str) -> None:
    page = httpx.get(f"{proxy.url}/ui/")
    assert page.status_code == 200
    assert 'id="session-hacked-1"' in page.text and 'id="session-clean-1"' in page.text
    totals = dict(re.findall(r'data-total="(\w+)">(\d+)<', page.text))
    assert int(totals["sessions"]) >= 2 and int(totals["blocked_calls"]) >= 1
    assert int(totals["reasks"]) >= 1 and int(totals["tool_calls"]) >= 4

    by_rule = httpx.get(f"{proxy.url}/ui/", params={"rule": RULE}).text
    assert 'id="session-hacked-1"' in by_rule and 'id="session-clean-1"' not in by_rule
    clean = httpx.get(f"{proxy.url}/ui/", params={"hacked": "no", "outcome": "success"}).text
    assert 'id="session-clean-1"' in clean and 'id="session-hacked-1"' not in clean
    prefix = httpx.get(f"{proxy.url}/ui/", params={"q": "hack"}).text
    assert 'id="session-hacked-1"' in prefix and 'id="session-clean-1"' not in prefix
    future = httpx.get(f"{proxy.url}/ui/", params={"since": "2999-01-01"}).text
    assert "No sessions match." in future


def test_the_transcript_shows_the_blocked_call_its_rule_and_what_the_model_read(
    proxy: ProxyServer, hacked: str
) -> None:
    page = httpx.get(f"{proxy.url}/ui/sessions/{hacked}")
    assert page.status_code == 200
    blocked = page.text.split('class="call blocked"', 1)[1].split("</div>\n</div>", 1)[0]
    assert BLOCKED in blocked and f"/rules/{RULE}" in blocked and "critical" in blocked
    assert "Blocked by safeagents (test-file-deletion)" in _text(blocked)
    text = _text(page.text)
    assert "re-ask" in text and "The test is in the way." in text  # the re-ask, the reasoning
    assert "write /workspace/src/app.py" in text and "return 42" in text  # a write as a file
    assert '<span class="del">-return 42</span>' in page.text  # an edit as a diff
    assert '<span class="add">+return 41</span>' in page.text


def test_a_lone_surrogate_the_model_sent_shows_as_its_escape(
    proxy: ProxyServer, scripted: ScriptedServer
) -> None:
    scripted.model.set_script(Script.from_data([{"say": "Odd \ud800.", "shell": "echo '\ud800'"}]))
    body = {"model": "m", "messages": [{"role": "user", "content": "fix"}], "tools": TOOLS}
    answer = httpx.post(proxy.session_url("odd-1") + "/chat/completions", json=body)
    assert answer.status_code == 200, answer.text
    page = httpx.get(f"{proxy.url}/ui/sessions/odd-1")
    assert page.status_code == 200
    assert "Odd \\ud800." in page.text


def test_outcome_and_reward_are_shown(proxy: ProxyServer, hacked: str) -> None:
    text = _text(httpx.get(f"{proxy.url}/ui/sessions/clean-1").text)
    assert "success=True, reward=1" in text


def test_rules_pages_show_docs_message_fixtures_and_counts(proxy: ProxyServer, hacked: str) -> None:
    rules = httpx.get(f"{proxy.url}/ui/rules")
    assert rules.status_code == 200 and f"/rules/{RULE}" in rules.text
    page = httpx.get(f"{proxy.url}/ui/rules/{RULE}")
    text = _text(page.text)
    assert "Message the model reads" in text and "Fixtures (" in text
    assert re.search(r"fired \d+ time\(s\), \d+ blocking, in \d+ session\(s\)", text)
    assert "Fixtures (0)" not in text and "hacked-1" in text
    explained = httpx.get(f"{proxy.url}/ui/explain", params={"rule": RULE})
    assert explained.status_code == 303 and explained.headers["location"] == f"/ui/rules/{RULE}"


def test_aliases_page_shows_routing_and_the_models_that_answered(proxy: ProxyServer) -> None:
    response = httpx.put(f"{proxy.url}/safeagents/v1/aliases/pi", json={"model": "adapter-v3"})
    assert response.status_code == 200
    try:
        text = _text(httpx.get(f"{proxy.url}/ui/aliases").text)
        assert "pi adapter-v3" in text and "Models that answered" in text
    finally:
        httpx.delete(f"{proxy.url}/safeagents/v1/aliases/pi")


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/ui/sessions/no-such-session", 404, "no session"),
        ("/ui/rules/no-such-rule", 404, "no rule"),
        ("/ui/explain?rule=no-such-rule", 404, "no rule"),
        ("/ui/no-such-page", 404, "no console page"),
        ("/ui/?hacked=maybe", 400, "use yes or no"),
        ("/ui/?outcome=great", 400, "outcome="),
        ("/ui/?since=yesterday", 400, "ISO 8601"),
        ("/ui/?page=0", 400, "page="),
        ("/ui/?page=-3", 400, "page="),
        ("/ui/?page=%C2%B2", 400, "page="),  # a digit int() refuses
        ("/ui/?page=" + "9" * 5000, 400, "page="),  # past int()'s limit
        ("/ui/?color=red", 400, "unknown filter"),
        ("/ui/?harness=%00", 400, "printable"),
        ("/ui/events?hacked=2", 400, "use yes or no"),
    ],
)
def test_bad_input_is_a_clear_page_never_a_500(
    proxy: ProxyServer, path: str, status: int, says: str
) -> None:
    response = httpx.get(proxy.url + path)
    assert response.status_code == status
    assert says in response.text and response.headers["content-type"].startswith("text/html")


def test_ui_without_slash_leads_to_the_console(proxy: ProxyServer) -> None:
    response = httpx.get(f"{proxy.url}/ui")
    assert response.status_code == 308 and response.headers["location"] == "/ui/"


def test_the_stylesheet_add_ons_share_is_served(proxy: ProxyServer) -> None:
    response = httpx.get(f"{proxy.url}/ui/static/console.css")
    assert response.status_code == 200 and "--accent" in response.text
    script = httpx.get(f"{proxy.url}/ui/static/console.js")
    assert script.status_code == 200 and "EventSource" in script.text


def _events_until(proxy: ProxyServer, sid: str, **headers: str) -> list[dict[str, str]]:
    """Read ``/ui/events`` until a ``session`` event for ``sid`` (and the totals after it)."""
    events: list[dict[str, str]] = []
    current: dict[str, str] = {}
    with httpx.stream("GET", f"{proxy.url}/ui/events", headers=headers, timeout=20) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if line:
                name, _, value = line.partition(": ")
                current[name] = value
                continue
            if current:
                events.append(current)
                current = {}
            seen = [e for e in events if e.get("event") == "session" and sid in e["data"]]
            if seen and events[-1].get("event") == "totals":
                return events
    raise AssertionError("the stream ended")


def test_the_event_stream_sends_changed_rows_and_resumes_where_it_left_off(
    proxy: ProxyServer, scripted: ScriptedServer
) -> None:
    import threading
    import time

    sid = f"live-{time.time_ns()}"
    runner = threading.Timer(1.5, run_session, (proxy, scripted, sid, [{"shell": "ls"}, "ok"]))
    runner.start()
    events = _events_until(proxy, sid)
    runner.join()
    mine = [e for e in events if e.get("event") == "session" and sid in e["data"]]
    assert f'id=\\"session-{sid}\\"' in mine[-1]["data"]  # the rendered row, as JSON
    assert '"sessions":' in events[-1]["data"]
    last = float(mine[0]["id"])  # a reconnecting browser sends the last id it got
    resumed = _events_until(proxy, sid, **{"Last-Event-ID": repr(last - 0.001)})
    assert any(e.get("event") == "session" and sid in e["data"] for e in resumed)


def test_the_proxy_hands_its_runs_to_add_on_sections(
    scripted: ScriptedServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from safeagents import Firewall
    from safeagents.proxy import ProxyConfig

    runs = tmp_path_factory.mktemp("runs")
    (runs / "exp-1").mkdir()
    (runs / "exp-1" / "metrics-pi.jsonl").write_text("")  # what safeagents train writes
    config = ProxyConfig(
        upstream=scripted.base_url,
        store=str(runs / "s.db"),
        console_runs=(str(runs),),
    )
    assert ProxyConfig.from_json(config.to_json()) == config  # as workers get it
    server = ProxyServer(config, firewall=Firewall.load(), port=0).start()
    try:
        page = httpx.get(f"{server.url}/ui/training/")
        assert page.status_code == 200 and "exp-1" in page.text
        assert 'href="/ui/training/">' in httpx.get(f"{server.url}/ui/").text
    finally:
        server.stop()
