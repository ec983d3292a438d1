"""Anthropic Messages: ``POST /v1/messages``, JSON or ``message_*``/``content_block_*`` SSE."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from safeagents.scripted._dialect import (
    Body,
    Dialect,
    content_text,
    estimate_tokens,
    fragments,
    output_tokens,
    schema_tools,
    sse,
)
from safeagents.scripted._render import OfferedTool, RenderedCall, Turn

__all__ = ["MESSAGES", "count_tokens"]


def _offered_tools(body: Body) -> list[OfferedTool]:
    return schema_tools(body.get("tools"), "name", "input_schema")


def _tool_outputs(body: Body) -> list[str]:
    messages = body.get("messages")
    outputs: list[str] = []
    for message in messages if isinstance(messages, Sequence) else ():
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):
            outputs.extend(
                content_text(block.get("content"))
                for block in content
                if isinstance(block, Mapping) and block.get("type") == "tool_result"
            )
    return outputs


def count_tokens(body: Body) -> dict[str, int]:
    """The answer to ``POST /v1/messages/count_tokens``."""
    return {"input_tokens": estimate_tokens([body.get("system"), body.get("messages", [])])}


def _tool_input(call: RenderedCall) -> dict[str, Any]:
    return dict(call.arguments) if call.arguments is not None else {"input": call.input or ""}


def _content(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
    blocks.extend(
        {
            "type": "tool_use",
            "id": f"toolu_{call.call_id}",
            "name": call.name,
            "input": _tool_input(call),
        }
        for call in turn.calls
    )
    return blocks


def _message(turn: Turn, body: Body, content: list[dict[str, Any]], done: bool) -> dict[str, Any]:
    return {
        "id": f"msg_scripted_{turn.step if turn.step is not None else 'side'}",
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model", "scripted")),
        "content": content,
        "stop_reason": ("tool_use" if turn.calls else "end_turn") if done else None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": count_tokens(body)["input_tokens"],
            "output_tokens": output_tokens(turn) if done else 1,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _reply_json(turn: Turn, body: Body) -> dict[str, Any]:
    return _message(turn, body, _content(turn), done=True)


def _reply_events(turn: Turn, body: Body) -> Iterator[str]:
    def event(kind: str, **fields: Any) -> str:
        return sse({"type": kind, **fields}, kind)

    yield event("message_start", message=_message(turn, body, [], done=False))
    yield event("ping")
    index = 0
    if turn.text:
        yield event("content_block_start", index=index, content_block={"type": "text", "text": ""})
        for piece in fragments(turn.text):
            yield event(
                "content_block_delta", index=index, delta={"type": "text_delta", "text": piece}
            )
        yield event("content_block_stop", index=index)
        index += 1
    for call in turn.calls:
        block = {"type": "tool_use", "id": f"toolu_{call.call_id}", "name": call.name, "input": {}}
        yield event("content_block_start", index=index, content_block=block)
        for piece in fragments(json.dumps(_tool_input(call), ensure_ascii=False)):
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield event("content_block_delta", index=index, delta=delta)
        yield event("content_block_stop", index=index)
        index += 1
    yield event(
        "message_delta",
        delta={"stop_reason": "tool_use" if turn.calls else "end_turn", "stop_sequence": None},
        usage={"output_tokens": output_tokens(turn)},
    )
    yield event("message_stop")


MESSAGES = Dialect("messages", _offered_tools, _tool_outputs, _reply_json, _reply_events)
