"""Routing paths to dialects and the contract every dialect shares."""

from __future__ import annotations

import pytest

from safeagents.protocols import (
    CHAT,
    MESSAGES,
    RESPONSES,
    Dialect,
    dialect_for_path,
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
        ("/x/v1/chat/completions", None),
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
