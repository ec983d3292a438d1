"""``safeagents serve`` start-up checks, ``--workers``, and ``safeagents sessions``."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from proxy_testkit import (
    BLOCKED,
    DIALECTS,
    HARNESS,
    PATHS,
    RULE,
    StartProxy,
    conversation_calls,
    decode,
    first_body,
    follow_up,
    http,
    script,
    serve_process,
    serve_workers,
)

import safeagents.proxy
from safeagents.cli import main
from safeagents.scripted import ScriptedServer


@pytest.fixture
def no_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the proxy must not start")

    monkeypatch.setattr(safeagents.proxy, "serve", refuse)


@pytest.mark.usefixtures("no_serving")
def test_serve_refuses_to_listen_beyond_loopback_without_a_token(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["serve", "--upstream", "http://127.0.0.1:1/v1", "--host", "0.0.0.0"])
    assert code == 2 and "--admin-token" in capsys.readouterr().err


@pytest.mark.usefixtures("no_serving")
def test_serve_reports_rule_errors_with_positions_and_does_not_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rule = tmp_path / "broken-rule.yaml"
    rule.write_text("id: broken-rule\ncategory: other\nseverity: high\naction: explode\n")
    code = main(["serve", "--upstream", "http://127.0.0.1:1/v1", "--rules", str(rule)])
    assert code == 2
    unwrapped = capsys.readouterr().err.replace("\n", "")  # rich wraps long lines
    assert re.search(rf"{re.escape(str(rule))}:\d+:\d+: action", unwrapped)


@pytest.mark.usefixtures("no_serving")
def test_serve_rejects_bad_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--upstream", "ftp://x"]) == 2
    assert main(["serve", "--upstream", "http://x", "--max-reasks", "-1"]) == 2
    assert main(["serve", "--upstream", "http://x", "--workers", "0"]) == 2


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_sessions_list_show_export_and_check_reads_the_export_back(
    dialect: str,
    backend: str,
    request: pytest.FixtureRequest,
    sid: str,
    tmp_path: Path,
    scripted: ScriptedServer,
    start_proxy: StartProxy,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if backend == "sqlite":
        store = str(tmp_path / "cli.db")
    else:
        store = request.getfixturevalue("postgres_server").database()
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}, "done"))
    proxy = start_proxy(scripted.base_url, fresh=True, store=store)
    url = proxy.session_url(sid) + PATHS[dialect]
    body = first_body(dialect)
    answer = decode(dialect, http.post(url, json=body))
    http.post(url, json=follow_up(dialect, body, answer, ["listing"]))
    capsys.readouterr()

    assert main(["sessions", "list", "--store", store, "--format", "json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["sessions"]
    assert listed["id"] == sid and listed["hacked"] is True and listed["outcome"] is None
    assert main(["sessions", "show", sid, "--store", store]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "HACKED" in shown and RULE in shown and "not scored" in shown

    exported = tmp_path / "export.jsonl"
    assert main(["sessions", "export", "--store", store, "--out", str(exported)]) == 0
    line = json.loads(exported.read_text())
    assert line["harness"] == HARNESS[dialect]
    assert main(["check", "--format", "json", str(exported)]) == 1
    (checked,) = json.loads(capsys.readouterr().out)["sessions"]
    assert checked["id"] == sid and checked["hacked"] is True
    assert [f["rule_id"] for f in checked["findings"]] == [RULE]
    assert main(["sessions", "show", "nobody", "--store", store]) == 2
    assert main(["sessions", "list", "--store", str(tmp_path / "missing.db")]) == 2


def test_two_workers_share_one_store(tmp_path: Path, scripted: ScriptedServer) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}, "done"))
    store, log = str(tmp_path / "workers.db"), tmp_path / "serve.log"
    with serve_workers(scripted.base_url, store, log) as base:
        for index in range(8):
            url = f"{base}/s/w{index}/v1{PATHS['chat']}"
            with httpx.Client() as client:  # a new connection per request spreads them out
                body = first_body("chat", task=f"task {index}")
                answer = decode("chat", client.post(url, json=body))
            with httpx.Client() as client:
                client.post(url, json=follow_up("chat", body, answer, [f"out {index}"]))
            seen = scripted.model.model_requests()[-1].body
            assert conversation_calls("chat", seen) == [BLOCKED, "ls"]
    sessions = json.loads(
        subprocess.run(
            [
                sys.executable,
                "-m",
                "safeagents.cli",
                "sessions",
                "list",
                "--store",
                store,
                "--format",
                "json",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )["sessions"]
    assert sorted(s["id"] for s in sessions) == [f"w{i}" for i in range(8)]
    assert all(s["turn_count"] == 3 and s["hacked"] for s in sessions)


def test_an_open_console_tab_does_not_hold_the_workers_shutdown(
    tmp_path: Path, scripted: ScriptedServer
) -> None:
    store, log = str(tmp_path / "workers.db"), tmp_path / "serve.log"
    with (
        serve_process(scripted.base_url, store, log, "--workers", "2") as (process, base),
        httpx.stream("GET", f"{base}/ui/events", timeout=30) as response,
    ):
        chunks = response.iter_raw()
        assert next(chunks).startswith(b"retry:")
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        stopped = time.monotonic() - started
        b"".join(chunks)  # the worker ended the stream: no broken response
    assert stopped < 2.0, f"serve --workers 2 took {stopped:.2f} s to stop with a tab open"
    assert "ERROR" not in log.read_text(), log.read_text()
