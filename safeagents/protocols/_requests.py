"""The request fields the proxy reads, per dialect, as pydantic models.

Only those fields are declared (all others are ignored here and forwarded untouched), so a
body whose ``messages`` is not a list or whose ``model`` is not a string is refused before it
reaches the upstream, while anything a harness adds passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["RequestError", "validate_request"]

_Object = dict[str, Any]


class RequestError(ValueError):
    """A request body whose fields do not have the types the dialect gives them."""


class _Fields(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class _Request(_Fields):
    model: str | None = None
    stream: bool | None = None
    tools: list[_Object] | None = None


class _ChatMessage(_Fields):
    role: str
    content: str | list[Any] | None = None
    tool_calls: list[_Object] | None = None


class _ChatRequest(_Request):
    messages: list[_ChatMessage] | None = None
    stream_options: _Object | None = None
    logprobs: bool | None = None
    return_token_ids: bool | None = None


class _ResponsesRequest(_Request):
    input: str | list[_Object] | None = None
    background: bool | None = None


class _AnthropicMessage(_Fields):
    role: str
    content: str | list[_Object]


class _MessagesRequest(_Request):
    messages: list[_AnthropicMessage] | None = None
    system: str | list[_Object] | None = None


_MODELS: dict[str, type[_Request]] = {
    "chat": _ChatRequest,
    "responses": _ResponsesRequest,
    "messages": _MessagesRequest,
}


def validate_request(dialect: str, body: Mapping[str, Any]) -> None:
    """Raise :class:`RequestError` (what is wrong, where) unless ``body`` fits ``dialect``."""
    try:
        _MODELS[dialect].model_validate(body)
    except ValidationError as error:
        problems = [
            f"{'.'.join(str(part) for part in problem['loc']) or 'body'}: {problem['msg']}"
            for problem in error.errors(include_url=False, include_input=False)[:3]
        ]
        raise RequestError("; ".join(problems)) from None
    if dialect == "responses" and body.get("background") is True:
        raise RequestError("background: safeagents cannot check an answer fetched later")
