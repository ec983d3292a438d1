"""Pure parts of the proxy: identity, config, splicing, rewrites, metrics."""

from __future__ import annotations

import shlex
import subprocess

import pytest
from proxy_testkit import DIALECTS, conversation_calls, first_body, follow_up

from safeagents._actions import ToolCall
from safeagents._harness import rejection_script
from safeagents._registry import default_registry
from safeagents.proxy import Metrics, ProxyConfig, is_loopback
from safeagents.proxy._identity import resolve_identity, root_key
from safeagents.proxy._sessions import classify, splice_hidden
from safeagents.store import HiddenEntry, SessionRecord


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.0.0.7", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.1", False),
        ("example.org", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    assert ProxyConfig(upstream="http://x", host=host).needs_admin_token is not loopback


def test_config_round_trips_for_worker_processes() -> None:
    config = ProxyConfig(upstream="http://x/v1", rules=("a",), vars={"k": "v"}, max_reasks=5)
    assert ProxyConfig.from_json(config.to_json()) == config
    with pytest.raises(ValueError, match="strategy"):
        ProxyConfig(upstream="http://x", strategy="pray")  # type: ignore[arg-type]


def test_identity_precedence_and_hash_fallback() -> None:
    headers = {"authorization": "Bearer sa-key", "x-session-id": "hdr"}
    assert resolve_identity("path", headers, "r").id == "path"
    assert resolve_identity(None, headers, "r").id == "key"
    assert resolve_identity(None, {"x-session-id": "hdr"}, "r").source == "header"
    fallback = resolve_identity(None, {"authorization": "Bearer sk-real"}, "abc" * 10)
    assert (fallback.source, fallback.id) == ("hash", "h-" + ("abc" * 10)[:24])
    assert resolve_identity(None, {"x-session-id": "x" * 500}, "r").id.startswith("x-")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_root_key_ignores_everything_after_the_first_user_message(dialect: str) -> None:
    body = first_body(dialect)
    response = {
        "chat": {"choices": [{"message": {"role": "assistant", "content": "ok"}}]},
        "messages": {"content": [{"type": "text", "text": "ok"}]},
        "responses": {"output": []},
    }[dialect]
    longer = follow_up(dialect, body, response, [])
    protocol = DIALECTS[dialect]
    info, later = protocol.parse_request(body), protocol.parse_request(longer)
    assert root_key(protocol, body, info) == root_key(protocol, longer, later)
    other = first_body(dialect, task="something else")
    assert root_key(protocol, other, protocol.parse_request(other)) != root_key(
        protocol, body, info
    )


@pytest.mark.parametrize("dialect", DIALECTS)
def test_hidden_pairs_splice_only_where_their_anchor_matches(dialect: str) -> None:
    protocol = DIALECTS[dialect]
    body = first_body(dialect)
    info = protocol.parse_request(body)
    anchor = info.conversation_key(info.message_count)
    hidden_call = {
        "chat": {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "h1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "rm x"}'},
                }
            ],
        },
        "messages": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "h1", "name": "Bash", "input": {"command": "rm x"}}
            ],
        },
        "responses": {
            "type": "function_call",
            "call_id": "h1",
            "name": "shell_command",
            "arguments": '{"command": "rm x"}',
        },
    }[dialect]
    entry = HiddenEntry(dialect, "pair", info.message_count, anchor, (hidden_call,))
    spliced, count = splice_hidden(protocol, body, info, [entry])
    assert count == 1 and conversation_calls(dialect, spliced) == ["rm x"]
    other = first_body(dialect, task="a different conversation")
    other_info = protocol.parse_request(other)
    untouched, none = splice_hidden(protocol, other, other_info, [entry])
    assert none == 0 and untouched == other
    wrong_dialect = HiddenEntry("other", "pair", info.message_count, anchor, (hidden_call,))
    assert splice_hidden(protocol, body, info, [wrong_dialect])[1] == 0


def test_classify_main_and_side() -> None:
    body = first_body("chat")
    info = DIALECTS["chat"].parse_request(body)
    key = info.conversation_key(info.message_count)
    session = SessionRecord(id="s", harness="pi", root_key="root", main_count=1, main_key="zz")
    assert classify(info, body, None, "root") == "main"
    assert classify(info, {**body, "tool_choice": "none"}, None, "root") == "side"
    assert classify(info, body, session, "root") == "main"  # same root: a restarted line
    assert classify(info, body, session, "elsewhere") == "side"
    extends = SessionRecord(id="s", harness="pi", main_count=info.message_count, main_key=key)
    assert classify(info, body, extends, "elsewhere") == "main"


_RESPONSES = {
    "chat": {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "Hmm.",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "bash", "arguments": '{"command": "rm x"}'},
                        },
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                        },
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    },
    "messages": {
        "content": [
            {"type": "text", "text": "Hmm."},
            {"type": "tool_use", "id": "c1", "name": "Bash", "input": {"command": "rm x"}},
            {"type": "tool_use", "id": "c2", "name": "Bash", "input": {"command": "ls"}},
        ],
        "stop_reason": "tool_use",
    },
    "responses": {
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hmm."}],
            },
            {
                "type": "custom_tool_call",
                "id": "ct1",
                "call_id": "c1",
                "name": "apply_patch",
                "input": "*** Begin Patch",
            },
            {
                "type": "function_call",
                "call_id": "c2",
                "name": "shell_command",
                "arguments": '{"command": "ls"}',
            },
        ]
    },
}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_rewrite_then_restore_round_trips(dialect: str) -> None:
    protocol = DIALECTS[dialect]
    response = _RESPONSES[dialect]
    shell = {"chat": "bash", "messages": "Bash", "responses": "shell_command"}[dialect]
    replacement = ToolCall("c1", shell, {"command": "printf no; exit 1"})
    rewritten, originals = protocol.rewrite_calls(response, {"c1": replacement})
    commands = [call.argument("command") for call in protocol.tool_calls(rewritten)]
    assert commands == ["printf no; exit 1", "ls"] and set(originals) == {"c1"}
    body = first_body(dialect)
    at = protocol.parse_request(body).message_count
    later = follow_up(dialect, body, rewritten, ["no", "a.py"])
    restored = protocol.restore_calls(later, at, originals)
    assert restored == follow_up(dialect, body, response, ["no", "a.py"])
    assert protocol.restore_calls(later, at, {}) == later
    trimmed = protocol.calls_only(response)
    assert [call.id for call in protocol.tool_calls(trimmed)] == ["c1", "c2"]
    assert "Hmm." not in str(trimmed)


@pytest.mark.parametrize(
    ("harness", "call", "offered", "tool", "argument"),
    [
        ("pi", ToolCall("1", "write", {"path": "t.py"}), (), "bash", "command"),
        ("opencode", ToolCall("1", "edit", {}), (), "bash", "command"),
        ("hermes", ToolCall("1", "patch", {}), (), "terminal", "command"),
        ("claude-code", ToolCall("1", "Write", {}), (), "Bash", "command"),
        ("mini-swe-agent", ToolCall("1", "bash", {}), (), "bash", "command"),
        (
            "codex",
            ToolCall("1", "apply_patch", "x"),
            ("apply_patch", "exec_command"),
            "exec_command",
            "cmd",
        ),
        ("codex", ToolCall("1", "shell", {"command": ["rm"]}), (), "shell", "command"),
    ],
)
def test_harness_plugins_rewrite_to_their_own_failing_shell_call(
    harness: str, call: ToolCall, offered: tuple[str, ...], tool: str, argument: str
) -> None:
    plugin = default_registry().harness(harness)
    rewritten = plugin.rewrite(call, "Blocked: don't 'touch' tests", offered=offered)
    assert rewritten is not None and rewritten.id == "1" and rewritten.name == tool
    value = rewritten.argument(argument)
    script = value[-1] if isinstance(value, list) else value
    assert script == rejection_script("Blocked: don't 'touch' tests")
    run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False)
    assert (run.returncode, run.stdout, run.stderr) == (1, "", "Blocked: don't 'touch' tests\n")
    assert (
        default_registry().harness("codex").rewrite(ToolCall("1", "apply_patch", "x"), "m") is None
    )
    assert default_registry().harness("generic").rewrite(call, "m") is None
    assert shlex.split(script)[0] == "printf"


def test_metrics_exposition() -> None:
    metrics = Metrics()
    metrics.inc("safeagents_findings_total", rule_id='a"b', action="reject")
    metrics.observe(0.2, dialect="chat")
    text = metrics.render()
    assert 'safeagents_findings_total{action="reject",rule_id="a\\"b"} 1' in text
    assert 'safeagents_request_seconds_bucket{dialect="chat",le="0.25"} 1' in text
    assert 'safeagents_request_seconds_bucket{dialect="chat",le="0.1"} 0' in text
    assert "safeagents_in_flight_requests 0" in text
    assert metrics.value("safeagents_findings_total", rule_id='a"b', action="reject") == 1
