"""Text mode in the exchange: which harness reads replies, what a reply's words call, and the
session history a text-mode conversation builds."""

from __future__ import annotations

from typing import Any

import pytest
from proxy_testkit import first_body, side_body

from safeagents import Firewall
from safeagents._actions import AnalysisContext
from safeagents._harness import Harness
from safeagents.exchange._exchange import Exchange
from safeagents.exchange._history import HistoryCache
from safeagents.exchange._sessions import RequestPlan, classify
from safeagents.exchange._text_mode import (
    action_calls,
    ending,
    reply_calls,
    rewritten,
    text_harness,
)
from safeagents.protocols import CHAT, MESSAGES

FIREWALL = Firewall.load()
MINI = FIREWALL.registry.harness("mini-swe-agent")
ACTION = "THOUGHT: look.\n\n```bash\ncat tests/test_a.py\n```"


def _body(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "Fix it."}, *messages]}


def _exchange(harness: str = "mini-swe-agent", text_mode: Harness | None = MINI) -> Exchange:
    body = _body()
    info = CHAT.parse_request(body)
    anchor = info.conversation_key(info.message_count)
    plan = RequestPlan("main", body, info.message_count, anchor, None, 0)
    return Exchange(
        id="x",
        session_id="s",
        dialect=CHAT,
        info=info,
        body=body,
        plan=plan,
        harness=harness,
        analysis=AnalysisContext(),
        root="r",
        session=None,
        upstream_url="http://upstream/v1/chat/completions",
        upstream_headers={},
        upstream_body=body,
        text_mode=text_mode,
    )


def _answer(message: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def test_the_harness_whose_text_mode_reads_the_replies() -> None:
    registry = FIREWALL.registry
    tool_less = CHAT.parse_request(side_body("chat"))
    with_tools = CHAT.parse_request(first_body("chat"))
    assert text_harness(registry, CHAT, with_tools, "mini-swe-agent") is MINI
    assert text_harness(registry, CHAT, tool_less, "generic") is MINI  # fail closed
    assert text_harness(registry, CHAT, with_tools, "generic") is None
    assert text_harness(registry, CHAT, tool_less, "pi") is None  # pi runs no text
    assert text_harness(registry, CHAT, tool_less, "a-plugin-since-removed") is MINI
    messages = MESSAGES.parse_request(side_body("messages"))
    assert text_harness(registry, MESSAGES, messages, "mini-swe-agent") is None


def test_a_text_mode_request_without_tools_is_the_main_line() -> None:
    body = side_body("chat")
    info = CHAT.parse_request(body)
    assert classify(info, body, None, "root") == "side"
    assert classify(info, body, None, "root", text_mode=True) == "main"


@pytest.mark.parametrize(
    "message",
    [
        None,
        "text",
        {"role": "assistant"},
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": 7},
        {"role": "assistant", "content": {"text": ACTION}},
        {"role": "assistant", "content": "```bash\nunterminated"},
        {"role": "assistant", "content": f"{ACTION}\n{ACTION}"},
    ],
)
def test_malformed_words_make_no_call(message: Any) -> None:
    ex = _exchange()
    assert reply_calls(ex, _answer(message)) == []
    for response in ({}, {"choices": "x"}, {"choices": [None]}, {"choices": [{"message": []}]}):
        assert reply_calls(ex, response) == []


def test_a_reply_calls_what_its_words_say_whatever_their_shape() -> None:
    ex = _exchange()
    parts = {"role": "assistant", "content": [{"type": "text", "text": ACTION}]}
    junk_calls = {"role": "tool", "content": ACTION, "tool_calls": ["junk"]}
    for message in (parts, junk_calls):
        (call,) = reply_calls(ex, _answer(message))
        assert (call.id, call.argument("command")) == ("text-1", "cat tests/test_a.py")
    plain = _answer({"role": "assistant", "content": ACTION})
    assert reply_calls(_exchange("pi", None), plain) == []


def test_a_rewrite_restores_the_original_in_later_requests() -> None:
    ex = _exchange()
    answer = _answer({"role": "assistant", "content": "THOUGHT: drop.\n```bash\nrm t.py\n```"})
    done = rewritten(ex, answer, "text-1", "Blocked: rm t.py")
    assert done is not None
    delivered, entry = done
    words = delivered["choices"][0]["message"]["content"]
    (call,) = reply_calls(ex, delivered)
    assert call.argument("command") == "printf '%s\\n' 'Blocked: rm t.py' >&2; exit 1"
    later = _body(  # the harness sent the words back as a part list
        {"role": "assistant", "content": [{"type": "text", "text": words}]},
        {"role": "user", "content": "Blocked: rm t.py"},
    )
    restored = CHAT.restore_calls(later, entry.at, {entry.call_id: entry.items[0]})
    assert restored["messages"][1] == answer["choices"][0]["message"]
    other = _body({"role": "assistant", "content": "something else"})
    assert CHAT.restore_calls(other, entry.at, {entry.call_id: entry.items[0]}) == other


def test_ending_a_text_mode_run_is_an_action_that_submits() -> None:
    stop = ending(_exchange(), "safeagents stopped this run.")
    (call,) = reply_calls(_exchange(), stop)
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in str(call.argument("command"))
    plain = ending(_exchange("pi", None), "safeagents stopped this run.")
    assert plain["choices"][0]["message"]["content"] == "safeagents stopped this run."


def test_the_user_message_after_an_action_is_its_output() -> None:
    body = _body(
        {"role": "assistant", "content": ACTION},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\nassert f() == 3\n"},
        {"role": "assistant", "content": "THOUGHT: no action, a format error."},
        {"role": "user", "content": "Please always provide EXACTLY ONE action."},
    )
    info = CHAT.parse_request(body)
    cache = HistoryCache(FIREWALL.registry)
    state = cache.state(("s", "main"), CHAT, body, info, "mini-swe-agent", AnalysisContext(), MINI)
    assert state.tool_outputs == ["<returncode>0</returncode>\n<output>\nassert f() == 3\n"]
    assert [e.argv0 for e in state.effects if e.kind == "exec"] == ["cat"]
    plain = HistoryCache(FIREWALL.registry).state(
        ("s", "main"), CHAT, body, info, "pi", AnalysisContext()
    )
    assert plain.tool_outputs == [] and plain.effects == []
    (unseen,) = HistoryCache(FIREWALL.registry).unseen_calls(("s", "main"), CHAT, body, info, MINI)
    assert unseen.id == "text-1"


def test_an_action_the_cache_ended_on_takes_the_next_request_s_user_message_as_output() -> None:
    cache = HistoryCache(FIREWALL.registry)
    body = _body({"role": "assistant", "content": ACTION})
    slot = ("s", "main")
    cache.state(slot, CHAT, body, CHAT.parse_request(body), "mini", AnalysisContext(), MINI)
    longer = {**body, "messages": [*body["messages"], {"role": "user", "content": "out"}]}
    info = CHAT.parse_request(longer)
    state = cache.state(slot, CHAT, longer, info, "mini", AnalysisContext(), MINI)
    assert state.tool_outputs == ["out"]


def test_calls_of_an_item_are_numbered_by_its_place() -> None:
    both = "```bash\nls\n```\n```mswea_bash_command\npwd\n```"
    calls = action_calls(CHAT, {"role": "assistant", "content": both}, MINI, 5)
    assert [call.id for call in calls] == ["text-5", "text-5.1"]
    assert action_calls(CHAT, {"role": "user", "content": both}, MINI, 5) == []
    assert action_calls(MESSAGES, {"role": "assistant", "content": both}, MINI, 5) == []
