"""Pure parts of the exchange: config, splicing, session lines, metrics."""

from __future__ import annotations

import pytest
from proxy_testkit import DIALECTS, conversation_calls, first_body

from safeagents.exchange import Metrics, ProxyConfig, is_loopback
from safeagents.exchange._sessions import classify, splice_hidden
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
