"""Pure parts of the proxy: identity, rewrites."""

from __future__ import annotations

import shlex
import subprocess

import pytest
from proxy_testkit import DIALECTS, first_body, follow_up

from safeagents._actions import ToolCall
from safeagents._harness import rejection_script
from safeagents._registry import default_registry
from safeagents.exchange import resolve_identity, root_key


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
