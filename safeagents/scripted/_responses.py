"""OpenAI Responses API: ``POST /v1/responses``, JSON or ``response.*`` SSE events."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from safeagents.scripted._dialect import (
    Body,
    Dialect,
    arguments_json,
    content_text,
    estimate_tokens,
    fragments,
    output_tokens,
    sse,
)
from safeagents.scripted._render import OfferedTool, RenderedCall, Turn

__all__ = ["RESPONSES"]

RESULT_ITEMS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def _offered_tools(body: Body) -> list[OfferedTool]:
    offered: list[OfferedTool] = []
    tools = body.get("tools")
    for tool in tools if isinstance(tools, Sequence) else ():
        if not isinstance(tool, Mapping):
            continue
        kind, name = tool.get("type"), tool.get("name")
        if kind == "function" and isinstance(name, str):
            schema = tool.get("parameters")
            offered.append(
                OfferedTool(name, "function", schema if isinstance(schema, Mapping) else {})
            )
        elif kind == "custom" and isinstance(name, str):
            offered.append(OfferedTool(name, "custom"))
        elif kind == "local_shell":
            offered.append(OfferedTool("local_shell", "local_shell"))
    return offered


def _tool_outputs(body: Body) -> list[str]:
    items = body.get("input")
    return [
        content_text(item.get("output"))
        for item in (items if isinstance(items, list) else ())
        if isinstance(item, Mapping) and item.get("type") in RESULT_ITEMS
    ]


def _message_item(turn: Turn, text: str, status: str = "completed") -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}] if text else []
    return {
        "id": f"msg_{_suffix(turn)}",
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    }


def _call_item(
    call: RenderedCall, status: str = "completed", empty: bool = False
) -> dict[str, Any]:
    if call.kind == "custom":
        return {
            "id": f"ctc_{call.call_id}",
            "type": "custom_tool_call",
            "status": status,
            "call_id": f"call_{call.call_id}",
            "name": call.name,
            "input": "" if empty else call.input or "",
        }
    if call.kind == "local_shell":
        return {
            "id": f"lsh_{call.call_id}",
            "type": "local_shell_call",
            "status": status,
            "call_id": f"call_{call.call_id}",
            "action": dict(call.arguments or {}),
        }
    return {
        "id": f"fc_{call.call_id}",
        "type": "function_call",
        "status": status,
        "call_id": f"call_{call.call_id}",
        "name": call.name,
        "arguments": "" if empty else arguments_json(call),
    }


def _suffix(turn: Turn) -> str:
    return f"scripted_{turn.step if turn.step is not None else 'side'}"


def _output(turn: Turn) -> list[dict[str, Any]]:
    items = [_message_item(turn, turn.text)] if turn.text else []
    return items + [_call_item(call) for call in turn.calls]


def _response(turn: Turn, body: Body, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    prompt = estimate_tokens(body.get("input", []))
    completion = output_tokens(turn)
    done = status == "completed"
    return {
        "id": f"resp_{_suffix(turn)}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "model": str(body.get("model", "scripted")),
        "output": output,
        "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": list(body.get("tools") or []),
        "temperature": body.get("temperature", 1.0),
        "top_p": body.get("top_p", 1.0),
        "text": {"format": {"type": "text"}},
        "store": bool(body.get("store", False)),
        "metadata": {},
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        }
        if done
        else None,
    }


def _reply_json(turn: Turn, body: Body) -> dict[str, Any]:
    return _response(turn, body, "completed", _output(turn))


def _reply_events(turn: Turn, body: Body) -> Iterator[str]:
    sequence = 0

    def event(kind: str, **fields: Any) -> str:
        nonlocal sequence
        sequence += 1
        return sse({"type": kind, "sequence_number": sequence - 1, **fields}, kind)

    yield event("response.created", response=_response(turn, body, "in_progress", []))
    yield event("response.in_progress", response=_response(turn, body, "in_progress", []))
    index = 0
    if turn.text:
        item_id = f"msg_{_suffix(turn)}"
        yield event(
            "response.output_item.added",
            output_index=index,
            item=_message_item(turn, "", "in_progress"),
        )
        part = {"type": "output_text", "text": "", "annotations": []}
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        yield event("response.content_part.added", **where, part=part)
        for piece in fragments(turn.text):
            yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
        yield event("response.output_text.done", **where, text=turn.text, logprobs=[])
        yield event("response.content_part.done", **where, part={**part, "text": turn.text})
        yield event(
            "response.output_item.done", output_index=index, item=_message_item(turn, turn.text)
        )
        index += 1
    for call in turn.calls:
        yield from _call_events(event, call, index)
        index += 1
    yield event("response.completed", response=_reply_json(turn, body))


def _call_events(event: Callable[..., str], call: RenderedCall, index: int) -> Iterator[str]:
    item = _call_item(call)
    yield event(
        "response.output_item.added",
        output_index=index,
        item=_call_item(call, "in_progress", empty=True),
    )
    where = {"item_id": item["id"], "output_index": index}
    if call.kind == "custom":
        for piece in fragments(call.input or ""):
            yield event("response.custom_tool_call_input.delta", **where, delta=piece)
        yield event("response.custom_tool_call_input.done", **where, input=call.input or "")
    elif call.kind == "function":
        arguments = arguments_json(call)
        for piece in fragments(arguments):
            yield event("response.function_call_arguments.delta", **where, delta=piece)
        yield event("response.function_call_arguments.done", **where, arguments=arguments)
    yield event("response.output_item.done", output_index=index, item=item)


RESPONSES = Dialect("responses", _offered_tools, _tool_outputs, _reply_json, _reply_events)
