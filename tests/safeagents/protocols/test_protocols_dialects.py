"""Routing paths to dialects and the contract every dialect shares."""

from __future__ import annotations

import pytest

from safeagents.protocols import (
    CHAT,
    MESSAGES,
    RESPONSES,
    Dialect,
    dialect_for_path,
    dialect_named,
    session_prefix,
)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/v1/chat/completions", CHAT),
        ("/chat/completions", CHAT),
        ("/v1/responses", RESPONSES),
        ("/responses", RESPONSES),
        ("/v1/messages", MESSAGES),
        ("/s/run-42/v1/chat/completions", CHAT),
        ("/s/abc/v1/responses?x=1", RESPONSES),
        ("/s/abc/v1/messages/", MESSAGES),
        ("/v1/messages/count_tokens", None),
        ("/v1/models", None),
        ("/v1/responses/resp_1", None),
        ("/s/abc", None),
        ("/x/v1/chat/completions", CHAT),
        ("/v1/chat/completions/x", None),
    ],
)
def test_dialect_for_path(path: str, expected: Dialect | None) -> None:
    assert dialect_for_path(path) is expected


def test_session_prefix_splits_the_id() -> None:
    assert session_prefix("/s/run-42/v1/messages") == ("run-42", "/v1/messages")
    assert session_prefix("/v1/messages") == (None, "/v1/messages")


def test_names() -> None:
    assert (CHAT.name, RESPONSES.name, MESSAGES.name) == ("chat", "responses", "messages")


@pytest.mark.parametrize("dialect", [CHAT, RESPONSES, MESSAGES], ids=lambda d: d.name)
def test_call_free_answers_have_nothing_to_filter_or_reject(dialect: Dialect) -> None:
    request = dialect.parse_request({"model": "m"})
    text = dialect.text_response(request, "hi")
    assert dialect.tool_calls(text) == []
    assert dialect.without_calls(text, ["x"]) == text
    with pytest.raises(ValueError, match="no tool calls"):
        dialect.with_rejections({"model": "m"}, text, {})


def test_dialect_named_finds_each_dialect_by_its_recorded_name() -> None:
    for dialect in (CHAT, RESPONSES, MESSAGES):
        assert dialect_named(dialect.name) is dialect
    assert dialect_named("other") is None


def test_response_text_in_each_dialect() -> None:
    chat = {"choices": [{"message": {"role": "assistant", "content": "hi"}}]}
    assert CHAT.response_text(chat) == "hi"
    responses = {
        "output": [
            {"type": "message", "content": [{"type": "output_text", "text": "hello"}]},
            {"type": "function_call", "name": "x"},
        ]
    }
    assert RESPONSES.response_text(responses) == "hello"
    messages = {"content": [{"type": "text", "text": "hey"}, {"type": "tool_use", "id": "t"}]}
    assert MESSAGES.response_text(messages) == "hey"


@pytest.mark.parametrize("dialect", [CHAT, RESPONSES, MESSAGES], ids=lambda d: d.name)
def test_a_call_free_conversation_has_nothing_to_restore(dialect: Dialect) -> None:
    body = {"model": "m", dialect.conversation_field: [{"role": "user", "content": "hi"}]}
    assert dialect.restore_calls(body, 0, {"x": {"id": "x"}}) == body
    assert dialect.with_conversation(body, []) == {"model": "m", dialect.conversation_field: []}
    assert [e for item in dialect.conversation(body) for e in dialect.history_events(item)] == []


def test_user_text_reads_user_messages_and_leaves_tool_results_out() -> None:
    assert CHAT.user_text({"role": "user", "content": [{"type": "text", "text": "fix it"}]}) == (
        "fix it"
    )
    assert CHAT.user_text({"role": "tool", "content": "out"}) is None
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    assert RESPONSES.user_text(item) == "go"
    assert RESPONSES.user_text({"role": "user", "content": "bare"}) == "bare"
    assert RESPONSES.user_text({"type": "function_call_output", "output": "x"}) is None
    mixed = [
        {"type": "tool_result", "tool_use_id": "t", "content": "out"},
        {"type": "text", "text": "and also this"},
    ]
    assert MESSAGES.user_text({"role": "user", "content": mixed}) == "and also this"
    results_only = [{"type": "tool_result", "tool_use_id": "t", "content": "out"}]
    assert MESSAGES.user_text({"role": "user", "content": results_only}) is None
    assert MESSAGES.user_text({"role": "assistant", "content": "hi"}) is None
    assert MESSAGES.user_text("junk") is None


@pytest.mark.parametrize(
    ("dialect", "item", "expected"),
    [
        (
            CHAT,
            {"role": "assistant", "content": "Fixed.", "reasoning_content": "Why?"},
            "Why?\nFixed.",
        ),
        (CHAT, {"role": "user", "content": "Fix it."}, ""),
        (CHAT, {"role": "tool", "tool_call_id": "c", "content": "ok"}, ""),
        (
            MESSAGES,
            {"role": "assistant", "content": [{"type": "text", "text": "Fixed."}]},
            "Fixed.",
        ),
        (MESSAGES, {"role": "user", "content": "Fix it."}, ""),
        (
            RESPONSES,
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Fixed."}],
            },
            "Fixed.",
        ),
        (
            RESPONSES,
            {"type": "function_call", "call_id": "c", "name": "shell", "arguments": "{}"},
            "",
        ),
        (RESPONSES, {"type": "message", "role": "user", "content": "Fix it."}, ""),
    ],
)
def test_assistant_text_of_one_conversation_item(
    dialect: Dialect, item: dict[str, object], expected: str
) -> None:
    assert dialect.assistant_text(item) == expected
