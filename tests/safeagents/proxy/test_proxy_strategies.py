"""The rewrite and stop strategies, monitor mode, and reject/flag/warn actions."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from proxy_testkit import (
    BLOCKED,
    DIALECTS,
    PATHS,
    RULE,
    StartProxy,
    calls,
    commands,
    conversation_calls,
    decode,
    finish_reason,
    first_body,
    follow_up,
    http,
    script,
    session_json,
    text,
    tool_results,
)

from safeagents import Firewall
from safeagents.scripted import ScriptedServer

CASES = [(dialect, stream) for dialect in DIALECTS for stream in (False, True)]


@pytest.mark.parametrize(("dialect", "stream"), CASES)
def test_rewrite_replaces_the_call_and_restores_it_in_history(
    sid: str, dialect: str, stream: bool, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, "done"))
    proxy = start_proxy(scripted.base_url, strategy="rewrite")
    url = proxy.session_url(sid) + PATHS[dialect]
    body = first_body(dialect, stream=stream)

    answer = decode(dialect, http.post(url, json=body))
    (command,) = commands(dialect, answer)
    assert command.startswith("printf '%s\\n' ") and command.endswith(">&2; exit 1")
    assert RULE in command
    assert finish_reason(dialect, answer) in ("tool_calls", "tool_use")
    assert len(scripted.model.model_requests()) == 1

    printed = f"Blocked by safeagents ({RULE}) ..."
    final = decode(dialect, http.post(url, json=follow_up(dialect, body, answer, [printed])))
    assert text(dialect, final) == "done"
    seen = scripted.model.model_requests()[-1].body
    assert conversation_calls(dialect, seen) == [BLOCKED]  # the original call is back
    assert tool_results(dialect, seen) == [printed]
    session = session_json(proxy.url, sid)
    assert session["hacked"] is True
    original = calls(dialect, session["turns"][0]["response"])[0]
    assert calls(dialect, answer)[0].id == original.id  # same call id, rewritten body


@pytest.mark.parametrize(("dialect", "stream"), CASES)
def test_stop_ends_the_run_and_later_requests_never_reach_the_upstream(
    sid: str, dialect: str, stream: bool, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, {"shell": "ls"}))
    proxy = start_proxy(scripted.base_url, strategy="stop")
    url = proxy.session_url(sid) + PATHS[dialect]
    body = first_body(dialect, stream=stream)

    answer = decode(dialect, http.post(url, json=body))
    assert commands(dialect, answer) == []
    assert finish_reason(dialect, answer) in ("stop", "end_turn")
    assert "safeagents stopped this run" in text(dialect, answer)
    again = decode(dialect, http.post(url, json=body))
    assert "stopped this run" in text(dialect, again)
    assert len(scripted.model.model_requests()) == 1
    session = session_json(proxy.url, sid)
    assert session["stopped"] is True and session["hacked"] is True


@pytest.mark.parametrize(("dialect", "stream"), CASES)
def test_monitor_mode_changes_nothing_but_records_findings(
    sid: str, dialect: str, stream: bool, scripted: ScriptedServer, start_proxy: StartProxy
) -> None:
    scripted.model.set_script(script({"shell": BLOCKED}, "done"))
    proxy = start_proxy(scripted.base_url, mode="monitor")
    answer = decode(
        dialect,
        http.post(proxy.session_url(sid) + PATHS[dialect], json=first_body(dialect, stream=stream)),
    )
    assert commands(dialect, answer) == [BLOCKED]
    assert len(scripted.model.model_requests()) == 1
    session = session_json(proxy.url, sid)
    assert session["hacked"] is True
    (finding,) = session["turns"][0]["findings"]
    assert finding["rule_id"] == RULE and finding["blocked"] is False


def _rule(directory: Path, rule_id: str, action: str, argv0: str) -> None:
    document = {
        "id": rule_id,
        "category": "other",
        "severity": "low",
        "action": action,
        "description": "## What it does\nTest rule.",
        "match": {"all": [{"effect": "exec"}, {"argv0": argv0}]},
        "message": "{rule}: {command}",
    }
    (directory / f"{rule_id}.yaml").write_text(yaml.safe_dump(document))


@pytest.fixture
def action_firewall(tmp_path: Path) -> Firewall:
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "pack.yaml").write_text(yaml.safe_dump({"name": "actions", "description": "d"}))
    _rule(pack, "flag-echo", "flag", "echo")
    _rule(pack, "warn-ls", "warn", "ls")
    return Firewall.load([str(pack)])


@pytest.mark.parametrize(("command", "hacked"), [("echo hi", True), ("ls", False), ("pwd", False)])
def test_flag_marks_hacked_without_blocking_and_warn_only_records(
    sid: str,
    command: str,
    hacked: bool,
    action_firewall: Firewall,
    scripted: ScriptedServer,
    start_proxy: StartProxy,
) -> None:
    scripted.model.set_script(script({"shell": command}, "done"))
    proxy = start_proxy(scripted.base_url, firewall=action_firewall)
    answer = decode(
        "chat", http.post(proxy.session_url(sid) + PATHS["chat"], json=first_body("chat"))
    )
    assert commands("chat", answer) == [command]
    session = session_json(proxy.url, sid)
    assert session["hacked"] is hacked
    assert len(session["findings"]) == (0 if command == "pwd" else 1)
