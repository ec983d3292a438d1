"""The request fields the proxy reads, per dialect, as pydantic-validated TypedDicts.

Only those fields are declared (all others are ignored here and forwarded untouched), so a
body whose ``messages`` is not a list or whose ``model`` is not a string is refused before it
reaches the upstream, while anything a harness adds passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

__all__ = ["RequestError", "validate_request"]

_Object = dict[str, Any]


class RequestError(ValueError):
    """A request body whose fields do not have the types the dialect gives them."""


_STRICT = ConfigDict(strict=True)


# TypedDicts rather than models: validating one builds no instances (ten times cheaper on a
# long conversation), and keys they do not declare are ignored


@with_config(_STRICT)
class _ChatMessage(TypedDict):
    role: str
    content: NotRequired[str | list[Any] | None]
    tool_calls: NotRequired[list[_Object] | None]


@with_config(_STRICT)
class _ChatRequest(TypedDict, total=False):
    model: str | None
    stream: bool | None
    tools: list[_Object] | None
    messages: list[_ChatMessage] | None
    stream_options: _Object | None
    logprobs: bool | None
    return_token_ids: bool | None


@with_config(_STRICT)
class _ResponsesRequest(TypedDict, total=False):
    model: str | None
    stream: bool | None
    tools: list[_Object] | None
    input: str | list[_Object] | None
    background: bool | None


@with_config(_STRICT)
class _AnthropicMessage(TypedDict):
    role: str
    content: str | list[_Object]


@with_config(_STRICT)
class _MessagesRequest(TypedDict, total=False):
    model: str | None
    stream: bool | None
    tools: list[_Object] | None
    messages: list[_AnthropicMessage] | None
    system: str | list[_Object] | None


_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    "chat": TypeAdapter(_ChatRequest),
    "responses": TypeAdapter(_ResponsesRequest),
    "messages": TypeAdapter(_MessagesRequest),
}


def validate_request(dialect: str, body: Mapping[str, Any]) -> None:
    """Raise :class:`RequestError` (what is wrong, where) unless ``body`` fits ``dialect``."""
    try:
        _ADAPTERS[dialect].validate_python(body)
    except ValidationError as error:
        problems = [
            f"{'.'.join(str(part) for part in problem['loc']) or 'body'}: {problem['msg']}"
            for problem in error.errors(include_url=False, include_input=False)[:3]
        ]
        raise RequestError("; ".join(problems)) from None
    if dialect == "responses" and body.get("background") is True:
        raise RequestError("background: safeagents cannot check an answer fetched later")
