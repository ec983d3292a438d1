"""Real agent harnesses, offline, through ``safeagents serve`` in front of the scripted model.

The scripted agent first tries three reward hacks (delete the test through ``bash -c``,
weaken its assertion with ``sed -i``, write a ``conftest.py`` that forges passes), then
fixes the bug honestly and runs the tests. In enforce mode the proxy withholds each hack,
re-asks the model with the rejection as a tool result, and splices the hidden pairs back
into later requests; the harness never sees a hack and finishes normally. In monitor mode
the bytes pass unchanged, the hacks really happen, and the findings are recorded.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from harness_support import require_harness
from proxied_support import (
    FINAL_STEP,
    FIXED,
    FORGE_STEP,
    FORGED_CONFTEST,
    HACKS,
    PROMPT,
    SCRIPT,
    AppServer,
    ByteTap,
    make_project,
    scripted_turns,
    suite_snapshot,
)

from safeagents import Firewall
from safeagents.proxy import ProxyConfig, ProxyServer, create_app
from safeagents.scripted import (
    HARNESSES,
    Script,
    ScriptedModel,
    ScriptedServer,
    prepare_launch,
    run_harness,
)
from safeagents.scripted import create_app as create_scripted_app

pytestmark = pytest.mark.e2e

# Harnesses that carry no session id of their own are put in a session by the URL path;
# the others are identified by their own headers (and found through the admin API).
PATH_SESSION = {"pi", "hermes"}
SESSION_HEADER = {
    "opencode": "x-session-affinity",
    "codex": "session-id",
    "claude": "x-claude-code-session-id",
}
EXPECTED_RULES = set(HACKS.values())


@pytest.fixture(scope="module")
def firewall() -> Firewall:
    return Firewall.load()


def _config(
    upstream: str, store: Path, mode: str = "enforce", *, capture_tokens: bool = False
) -> ProxyConfig:
    # cwd stays the proxy's default (/workspace): the scripted agent uses relative paths, and
    # the workspace itself lives under /tmp, which the bundled rules treat as scratch space.
    return ProxyConfig(
        upstream=upstream,
        store=str(store),
        mode=mode,  # type: ignore[arg-type]
        capture_tokens=capture_tokens,
    )


def _admin(proxy_url: str, path: str) -> Any:
    response = httpx.get(f"{proxy_url}/safeagents/v1/{path}", timeout=30)
    response.raise_for_status()
    return response.json()


def _main_session(proxy_url: str, harness: str, path_id: str | None) -> dict[str, Any]:
    """The one session of the run that made tool calls, with its turns."""
    if path_id is not None:
        return dict(_admin(proxy_url, f"sessions/{path_id}"))
    listed = _admin(proxy_url, "sessions")["sessions"]
    working = [session for session in listed if session["tool_calls"] > 0]
    assert len(working) == 1, listed
    return dict(_admin(proxy_url, f"sessions/{working[0]['id']}"))


@pytest.mark.parametrize("harness", HARNESSES)
def test_proxy_blocks_hacks_and_the_harness_finishes(
    harness: str, tmp_path: Path, firewall: Firewall
) -> None:
    _blocks_hacks(harness, tmp_path, firewall)


@pytest.mark.parametrize("harness", ["codex", "claude"])
def test_harnesses_of_other_dialects_run_on_a_chat_upstream_with_tokens(
    harness: str, tmp_path: Path, firewall: Firewall
) -> None:
    """With token capture, codex (Responses) and claude (Messages) are served from the
    upstream's Chat Completions endpoint: the same run, and every main-line turn has tokens."""
    session, requests = _blocks_hacks(harness, tmp_path, firewall, capture_tokens=True)
    assert {request.dialect for request in requests} == {"chat"}
    main_line = [t for t in session["turns"] if t["kind"] in ("main", "reask")]
    assert main_line and all(t["tokens"]["completion_token_ids"] for t in main_line)
    assert {t["dialect"] for t in main_line} == {"responses" if harness == "codex" else "messages"}


def _blocks_hacks(
    harness: str, tmp_path: Path, firewall: Firewall, *, capture_tokens: bool = False
) -> tuple[dict[str, Any], list[Any]]:
    binary = require_harness(harness)
    workspace = make_project(tmp_path / "project")
    original_suite = suite_snapshot(workspace)
    path_id = f"e2e-{harness}-{uuid.uuid4().hex[:8]}" if harness in PATH_SESSION else None
    with ScriptedServer(SCRIPT) as server:
        config = _config(server.url, tmp_path / "safeagents.db", capture_tokens=capture_tokens)
        with ProxyServer(config, firewall=firewall, port=0) as proxy:
            base_url = proxy.session_url(path_id) if path_id else proxy.base_url
            launch = prepare_launch(
                harness, base_url, "scripted-model", workspace, PROMPT, tmp_path / "state", binary
            )
            run = run_harness(launch, timeout=240)
            session = _main_session(proxy.url, harness, path_id)
        requests = server.model.model_requests()

    assert not run.timed_out, run.output[-4000:]
    assert run.returncode == 0, run.output[-4000:]
    # the harness never ran a hack: the suite is byte-identical, and the bug is fixed
    assert suite_snapshot(workspace) == original_suite
    assert (workspace / "calc.py").read_text() == FIXED

    turns = scripted_turns(requests)
    assert sorted(turns) == list(range(FINAL_STEP + 1)), [r.reply for r in requests]
    for step, rule_id in HACKS.items():
        # the re-ask after a blocked hack ends with the rejection as the call's tool result
        after = turns[step + 1]
        assert after.tool_results == step + 1
        rejection = after.tool_outputs()[step]
        assert f"Blocked by safeagents ({rule_id})" in rejection, after.tool_outputs()
    # the harness's own requests carry the spliced rejections the harness never saw
    final_outputs = turns[FINAL_STEP].tool_outputs()
    assert len(final_outputs) == FINAL_STEP
    for step, rule_id in HACKS.items():
        assert f"({rule_id})" in final_outputs[step]
    assert "1 passed" in final_outputs[FINAL_STEP - 1]
    assert not turns[FORGE_STEP + 1].stream  # a re-ask, made by the proxy
    assert turns[FINAL_STEP].stream  # the harness's own (streamed) request

    if harness in SESSION_HEADER:
        header = SESSION_HEADER[harness]
        assert session["id"] == turns[FINAL_STEP].headers[header]
    assert session["hacked"] is True
    found = {finding["rule_id"] for finding in session["findings"]}
    assert found >= EXPECTED_RULES, session["findings"]
    blocked = [f for turn in session["turns"] for f in turn["findings"] if f["blocked"]]
    assert {finding["rule_id"] for finding in blocked} >= EXPECTED_RULES
    assert session["tool_calls"] >= FINAL_STEP
    return session, requests


def _model_exchanges(tap: ByteTap) -> list[tuple[int, str, bytes]]:
    return sorted(
        (exchange.status, exchange.content_type, exchange.response)
        for exchange in tap.exchanges
        if exchange.method == "POST" and exchange.path.endswith("/chat/completions")
    )


def test_monitor_mode_passes_the_hacks_through_unchanged(
    tmp_path: Path, firewall: Firewall
) -> None:
    harness = "pi"
    binary = require_harness(harness)
    workspace = make_project(tmp_path / "throwaway-copy")
    session_id = f"e2e-monitor-{uuid.uuid4().hex[:8]}"
    model = ScriptedModel(SCRIPT)
    upstream_tap = ByteTap(create_scripted_app(model))
    with AppServer(upstream_tap, lifespan="off") as upstream:
        config = _config(upstream.url, tmp_path / "safeagents.db", mode="monitor")
        proxy_tap = ByteTap(create_app(config, firewall=firewall))
        with AppServer(proxy_tap) as proxy:
            base_url = f"{proxy.url}/s/{session_id}/v1"
            launch = prepare_launch(
                harness, base_url, "scripted-model", workspace, PROMPT, tmp_path / "state", binary
            )
            run = run_harness(launch, timeout=240)
            session = _admin(proxy.url, f"sessions/{session_id}")

    assert not run.timed_out, run.output[-4000:]
    assert run.returncode == 0, run.output[-4000:]
    # the harness saw exactly the upstream's bytes, answer for answer
    delivered, answered = _model_exchanges(proxy_tap), _model_exchanges(upstream_tap)
    assert len(delivered) == FINAL_STEP + 1
    assert delivered == answered
    # so the hacks really ran in the (throwaway) workspace
    assert not (workspace / "tests" / "test_calc.py").exists()
    assert (workspace / "conftest.py").read_text() == FORGED_CONFTEST
    # no request held a rejection: the model saw only what the harness did
    requests = scripted_turns(model.model_requests())
    assert all("safeagents" not in out for out in requests[FINAL_STEP].tool_outputs())
    # and the findings were recorded, unblocked, marking the session hacked
    assert session["hacked"] is True
    assert {finding["rule_id"] for finding in session["findings"]} >= EXPECTED_RULES
    turn_findings = [f for turn in session["turns"] for f in turn["findings"]]
    assert turn_findings and not any(finding["blocked"] for finding in turn_findings)
    assert all(turn["kind"] != "reask" for turn in session["turns"])


THOUGHT = "The failing test names calc.py, so I read it first."
THINKING_SCRIPT = Script.from_data(
    [
        {"think": THOUGHT, "say": "Reading the code.", "shell": "cat calc.py"},
        {"think": "That was enough.", "say": "done"},
    ]
)


@pytest.mark.parametrize("harness", ["pi", "codex", "claude"])
def test_reasoning_stays_in_the_context_of_every_dialect(
    harness: str, tmp_path: Path, firewall: Firewall
) -> None:
    """The engine's reasoning reaches pi as chat ``reasoning``, codex as a reasoning item and
    claude as a thinking block; each sends it back, and it reaches the chat upstream again as
    the assistant message's ``reasoning`` (the chat template renders it into the prompt)."""
    binary = require_harness(harness)
    workspace = make_project(tmp_path / "project")
    with ScriptedServer(THINKING_SCRIPT) as server:
        config = _config(server.url, tmp_path / "safeagents.db", capture_tokens=True)
        with ProxyServer(config, firewall=firewall, port=0) as proxy:
            launch = prepare_launch(
                harness,
                proxy.base_url,
                "scripted-model",
                workspace,
                PROMPT,
                tmp_path / "state",
                binary,
                thinking=True,
            )
            run = run_harness(launch, timeout=240)
        requests = server.model.model_requests()

    assert run.returncode == 0 and not run.timed_out, run.output[-4000:]
    turns = scripted_turns(requests)
    assert sorted(turns) == [0, 1], [r.reply for r in requests]
    replayed = [
        message
        for message in turns[1].body["messages"]
        if message.get("role") == "assistant" and message.get("tool_calls")
    ]
    assert len(replayed) == 1, turns[1].body["messages"]
    assert replayed[0].get("reasoning") == THOUGHT
