"""Responses and Messages served from Chat Completions: requests, answers and streams, with
reasoning kept both ways and the engine's tokens carried (and stripped for the client)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from safeagents.protocols import MESSAGES, RESPONSES, TOKENS_KEY, chat_bridge, encode_json

CALL = {
    "id": "call_9",
    "type": "function",
    "function": {"name": "bash", "arguments": '{"command": "ls"}'},
}
PATCH = {
    "id": "call_10",
    "type": "function",
    "function": {"name": "apply_patch", "arguments": '{"input": "*** Begin Patch"}'},
}


def _chat_answer(calls: list[dict[str, Any]]) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": "Listing.",
        "reasoning": "I should look.",
        "tool_calls": calls,
    }
    return {
        "id": "chatcmpl-abc",
        "model": "codex-v3",
        "prompt_token_ids": [1, 2, 3],
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls",
                "token_ids": [7, 8],
                "logprobs": {"content": [{"logprob": -0.5}, {"logprob": -0.25}]},
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }


def _responses_request() -> dict[str, Any]:
    return {
        "model": "m",
        "instructions": "You are codex.",
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "Be safe."}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "fix it"}],
            },
        ],
        "tools": [
            {"type": "function", "name": "bash", "parameters": {"type": "object"}},
            {"type": "custom", "name": "apply_patch", "description": "patch"},
            {"type": "web_search"},
        ],
        "stream": True,
    }


def test_a_responses_turn_round_trips_through_chat_keeping_reasoning() -> None:
    bridge = chat_bridge(RESPONSES)
    assert bridge is not None
    request = _responses_request()
    chat = bridge.request(request, capture=True)
    assert chat["messages"][0] == {"role": "system", "content": "You are codex.\n\nBe safe."}
    assert [tool["function"]["name"] for tool in chat["tools"]] == ["bash", "apply_patch"]
    assert chat["return_token_ids"] is True and chat["stream_options"]["include_usage"]

    answer = bridge.response(_chat_answer([CALL, PATCH]), request)
    kinds = [item["type"] for item in answer["output"]]
    assert kinds == ["reasoning", "message", "function_call", "custom_tool_call"]
    assert answer["output"][3]["input"] == "*** Begin Patch"
    assert answer["model"] == "codex-v3"
    tokens = RESPONSES.extract_tokens(answer)
    assert tokens is not None and tokens.completion_token_ids == (7, 8)
    assert tokens.logprobs == (-0.5, -0.25)
    assert TOKENS_KEY not in RESPONSES.strip_token_fields(answer)

    # codex replays reasoning without its content: the text comes back from encrypted_content
    replayed = [dict(item) for item in answer["output"]]
    replayed[0] = {k: v for k, v in replayed[0].items() if k != "content"}
    results = [
        {"type": "function_call_output", "call_id": "call_9", "output": "a.py"},
        {"type": "custom_tool_call_output", "call_id": "call_10", "output": "done"},
    ]
    follow = {**request, "input": [*request["input"], *replayed, *results]}
    messages = bridge.request(follow)["messages"]
    assistant = messages[2]
    assert assistant["reasoning"] == "I should look." and assistant["content"] == "Listing."
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["bash", "apply_patch"]
    assert json.loads(assistant["tool_calls"][1]["function"]["arguments"]) == {
        "input": "*** Begin Patch"
    }
    assert messages[3:] == [
        {"role": "tool", "tool_call_id": "call_9", "content": "a.py"},
        {"role": "tool", "tool_call_id": "call_10", "content": "done"},
    ]


def test_a_messages_turn_round_trips_through_chat_keeping_thinking() -> None:
    bridge = chat_bridge(MESSAGES)
    assert bridge is not None
    request = {
        "model": "m",
        "system": [{"type": "text", "text": "You are Claude Code."}],
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "fix it"}],
        "tools": [
            {"name": "bash", "input_schema": {"type": "object"}},
            {"type": "web_search_20250305", "name": "web"},
        ],
        "tool_choice": {"type": "any"},
    }
    chat = bridge.request(request)
    assert chat["max_tokens"] == 100 and chat["tool_choice"] == "required"
    assert [tool["function"]["name"] for tool in chat["tools"]] == ["bash"]
    answer = bridge.response(_chat_answer([CALL]), request)
    assert [block["type"] for block in answer["content"]] == ["thinking", "text", "tool_use"]
    assert answer["content"][2]["input"] == {"command": "ls"}
    assert answer["stop_reason"] == "tool_use"
    follow = {
        **request,
        "messages": [
            *request["messages"],
            {"role": "assistant", "content": MESSAGES.strip_token_fields(answer)["content"]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "call_9", "content": "a.py"}],
            },
        ],
    }
    messages = bridge.request(follow)["messages"]
    assert messages[2]["reasoning"] == "I should look."
    assert messages[3] == {"role": "tool", "tool_call_id": "call_9", "content": "a.py"}
    assert len(messages) == 4


def _chunks() -> bytes:
    def chunk(delta: dict[str, Any], **extra: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": extra.pop("finish", None), **extra}
        return {"id": "chatcmpl-abc", "model": "codex-v3", "choices": [choice]}

    events = [
        {**chunk({"role": "assistant"}), "prompt_token_ids": [1, 2, 3]},
        chunk({"reasoning": "I should "}, token_ids=[5], logprobs={"content": [{"logprob": -1.0}]}),
        chunk({"reasoning": "look."}, token_ids=[6], logprobs={"content": [{"logprob": -1.0}]}),
        chunk({"content": "Listing."}, token_ids=[7], logprobs={"content": [{"logprob": -0.5}]}),
        chunk(
            {"tool_calls": [{"index": 0, **CALL}]},
            token_ids=[8],
            logprobs={"content": [{"logprob": -0.25}]},
        ),
        chunk({}, finish="tool_calls"),
        {"id": "chatcmpl-abc", "model": "codex-v3", "choices": [], "usage": {"prompt_tokens": 3}},
    ]
    return b"".join(encode_json(event) for event in events) + b"data: [DONE]\n\n"


@pytest.mark.parametrize("dialect", [RESPONSES, MESSAGES])
def test_a_chat_stream_reaches_the_client_in_its_dialect_text_first(dialect: Any) -> None:
    bridge = chat_bridge(dialect)
    assert bridge is not None
    request = (
        _responses_request()
        if dialect is RESPONSES
        else {"model": "m", "messages": [], "stream": True}
    )
    info = dialect.parse_request(request)
    assembler = bridge.assembler(info, request)
    forwarded = b"".join(assembler.feed(bytes([byte])) for byte in _chunks())
    assert b"Listing." in forwarded and b"I should " in forwarded
    assert b"call_9" not in forwarded  # held until checked
    answer = assembler.finish()
    tokens = dialect.extract_tokens(answer)
    assert tokens is not None and tokens.completion_token_ids == (5, 6, 7, 8)
    assert tokens.prompt_token_ids == (1, 2, 3)
    delivered = dialect.strip_token_fields(answer)
    client = dialect.assembler()
    client.feed(forwarded + assembler.tail(delivered))
    received = client.finish()
    assert dialect.tool_calls(received) == dialect.tool_calls(delivered)
    assert len(dialect.tool_calls(received)) == 1
    assert dialect.response_text(received) == "Listing."
    assert TOKENS_KEY.encode() not in forwarded


def test_the_harness_s_reasoning_switch_reaches_the_template_unless_the_run_sets_it() -> None:
    from safeagents.protocols import Sampling

    messages, responses = chat_bridge(MESSAGES), chat_bridge(RESPONSES)
    assert messages is not None and responses is not None
    off = {"model": "m", "messages": [], "thinking": {"type": "disabled"}}
    assert messages.request(off)["chat_template_kwargs"]["enable_thinking"] is False
    on = {"model": "m", "messages": [], "thinking": {"type": "enabled", "budget_tokens": 9}}
    assert messages.request(on)["chat_template_kwargs"]["enable_thinking"] is True
    assert "chat_template_kwargs" not in messages.request({"model": "m", "messages": []})
    codex = {"model": "m", "input": "hi", "reasoning": {"effort": "none"}}
    assert responses.request(codex)["chat_template_kwargs"]["enable_thinking"] is False
    enforced = responses.request(codex, sampling=Sampling(thinking=True))
    assert enforced["chat_template_kwargs"]["enable_thinking"] is True


_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
_keys = st.sampled_from(
    [
        "input",
        "instructions",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "thinking",
        "reasoning",
        "max_tokens",
        "max_output_tokens",
        "stop_sequences",
        "model",
        "stream",
        "content",
        "type",
        "role",
        "tool_calls",
        "choices",
        "message",
        "function",
        "arguments",
        "reasoning_content",
        "usage",
        "prompt_tokens",
        "created",
        "prompt_token_ids",
        "token_ids",
        "logprobs",
        "id",
    ]
)
_shaped = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=st.dictionaries(_keys, _shaped, max_size=6),
    answer=st.dictionaries(_keys, _shaped, max_size=5),
)
def test_translation_never_raises_on_what_a_dialect_accepts(
    body: dict[str, Any], answer: dict[str, Any]
) -> None:
    for dialect in (RESPONSES, MESSAGES):
        bridge = chat_bridge(dialect)
        assert bridge is not None
        try:
            dialect.parse_request(body)
        except (TypeError, ValueError, AttributeError):
            continue  # refused with a 400 before any translation
        chat = bridge.request(body, capture=True)
        assert isinstance(chat["messages"], list)
        json.dumps(chat)
        translated = bridge.response(answer, body)
        dialect.tool_calls(translated)
        json.dumps(translated)


@pytest.mark.parametrize("dialect", [RESPONSES, MESSAGES])
def test_an_upstream_s_nonsense_counts_and_token_fields_are_dropped_not_raised(
    dialect: Any,
) -> None:
    bridge = chat_bridge(dialect)
    assert bridge is not None
    answer = _chat_answer([CALL])
    answer["usage"] = {"prompt_tokens": "many", "completion_tokens": True}
    answer["created"] = "today"
    answer["prompt_token_ids"] = ["a", "b"]
    translated = bridge.response(answer, {"model": "m"})
    assert dialect.extract_tokens(translated) is None  # the turn records no tokens
    assert len(dialect.tool_calls(translated)) == 1
