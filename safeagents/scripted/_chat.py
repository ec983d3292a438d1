"""OpenAI Chat Completions: ``POST /v1/chat/completions``, JSON or ``chat.completion.chunk`` SSE."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from safeagents.scripted._dialect import (
    Body,
    Dialect,
    arguments_json,
    content_text,
    estimate_tokens,
    fragments,
    output_tokens,
    schema_tools,
    sse,
)
from safeagents.scripted._render import OfferedTool, Turn
from safeagents.scripted._tokens import (
    add_token_fields,
    completion_token_ids,
    logprobs,
    prompt_token_ids,
    wants_ids,
    wants_logprobs,
)

__all__ = ["CHAT"]


def _offered_tools(body: Body) -> list[OfferedTool]:
    tools = body.get("tools")
    functions = [
        tool["function"]
        for tool in (tools if isinstance(tools, Sequence) else ())
        if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping)
    ]
    legacy = body.get("functions")
    return schema_tools(functions, "name", "parameters") + schema_tools(
        legacy, "name", "parameters"
    )


def _tool_outputs(body: Body) -> list[str]:
    messages = body.get("messages")
    return [
        content_text(message.get("content"))
        for message in (messages if isinstance(messages, Sequence) else ())
        if isinstance(message, Mapping) and message.get("role") in ("tool", "function")
    ]


def _ids(turn: Turn) -> tuple[str, int]:
    return f"chatcmpl-scripted-{turn.step if turn.step is not None else 'side'}", int(time.time())


def _usage(turn: Turn, body: Body) -> dict[str, int]:
    prompt = estimate_tokens(body.get("messages", []))
    completion = output_tokens(turn)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _finish_reason(turn: Turn) -> str:
    return "tool_calls" if turn.calls else "stop"


def _reply_json(turn: Turn, body: Body) -> dict[str, Any]:
    completion_id, created = _ids(turn)
    message: dict[str, Any] = {"role": "assistant", "content": turn.text}
    if turn.reasoning:
        message["reasoning"] = turn.reasoning
    if turn.calls:
        message["tool_calls"] = [
            {
                "id": f"call_{call.call_id}",
                "type": "function",
                "function": {"name": call.name, "arguments": arguments_json(call)},
            }
            for call in turn.calls
        ]
    response: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": str(body.get("model", "scripted")),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _finish_reason(turn),
            }
        ],
        "usage": _usage(turn, body),
    }
    add_token_fields(response, turn, body)
    return response


def _reply_events(turn: Turn, body: Body) -> Iterator[str]:
    completion_id, created = _ids(turn)
    model = str(body.get("model", "scripted"))

    def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        top = {key: extra.pop(key) for key in ("prompt_token_ids",) if key in extra}
        choice.update(extra)
        return sse(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [choice],
                **top,
            }
        )

    first: dict[str, Any] = {"prompt_token_ids": prompt_token_ids(body)} if wants_ids(body) else {}
    yield chunk({"role": "assistant", "content": ""}, **first)
    for piece in fragments(turn.reasoning or ""):
        yield chunk({"reasoning": piece})
    for piece in fragments(turn.text or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(turn.calls):
        head = {
            "index": index,
            "id": f"call_{call.call_id}",
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield chunk({"tool_calls": [head]})
        for piece in fragments(arguments_json(call)):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    last: dict[str, Any] = {}
    if wants_ids(body):
        last["token_ids"] = completion_token_ids(turn)
    if wants_logprobs(body):
        last["logprobs"] = logprobs(turn)
    yield chunk({}, _finish_reason(turn), **last)
    options = body.get("stream_options")
    if isinstance(options, Mapping) and options.get("include_usage"):
        yield sse(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": _usage(turn, body),
            }
        )
    yield sse("[DONE]")


CHAT = Dialect("chat", _offered_tools, _tool_outputs, _reply_json, _reply_events)
