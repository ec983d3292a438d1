"""Dialect-specific edits the protocols module does not offer: calls-only turns, rewriting a
call in a response, restoring the original in a later request, and reading history."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from typing import Any

from safeagents._actions import ToolCall
from safeagents.protocols import Dialect

__all__ = [
    "calls_only",
    "conversation",
    "history_events",
    "restore_calls",
    "rewrite_calls",
]

JSONObject = dict[str, Any]
_CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUT_OF = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "function_call_output",
}


def _dicts(value: Any) -> list[JSONObject]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _chat_message(response: JSONObject) -> JSONObject:
    choices = _dicts(response.get("choices"))
    message = choices[0].get("message") if choices else None
    return message if isinstance(message, dict) else {}


def calls_only(dialect: Dialect, response: Mapping[str, Any]) -> JSONObject:
    """A copy of ``response`` keeping only its tool calls (text and reasoning dropped)."""
    result = copy.deepcopy(dict(response))
    if dialect.name == "chat":
        message = _chat_message(result)
        for key in ("reasoning_content", "reasoning", "refusal"):
            message.pop(key, None)
        message["content"] = None
    elif dialect.name == "messages":
        result["content"] = [
            b for b in _dicts(result.get("content")) if b.get("type") == "tool_use"
        ]
    else:
        result["output"] = [i for i in _dicts(result.get("output")) if i.get("type") in _CALL_ITEMS]
    return result


def _arguments_json(arguments: Mapping[str, Any] | str) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(dict(arguments), ensure_ascii=False)


def _rewritten_item(original: JSONObject, call: ToolCall) -> JSONObject:
    base: JSONObject = {key: original[key] for key in ("id", "call_id") if key in original}
    base["status"] = "completed"
    if call.name == "local_shell":
        action = call.arguments if isinstance(call.arguments, Mapping) else {}
        return {**base, "type": "local_shell_call", "action": dict(action)}
    arguments = _arguments_json(call.arguments)
    return {**base, "type": "function_call", "name": call.name, "arguments": arguments}


def rewrite_calls(
    dialect: Dialect, response: Mapping[str, Any], replacements: Mapping[str, ToolCall]
) -> tuple[JSONObject, dict[str, JSONObject]]:
    """``response`` with each call in ``replacements`` (by id) replaced; and the originals."""
    result = copy.deepcopy(dict(response))
    originals: dict[str, JSONObject] = {}
    if dialect.name == "chat":
        for entry in _dicts(_chat_message(result).get("tool_calls")):
            call = replacements.get(str(entry.get("id") or ""))
            if call is not None:
                originals[call.id] = copy.deepcopy(entry)
                arguments = _arguments_json(call.arguments)
                entry["function"] = {"name": call.name, "arguments": arguments}
    elif dialect.name == "messages":
        for block in _dicts(result.get("content")):
            call = replacements.get(str(block.get("id") or ""))
            if block.get("type") == "tool_use" and call is not None:
                originals[call.id] = copy.deepcopy(block)
                block["name"] = call.name
                block["input"] = dict(call.arguments) if isinstance(call.arguments, Mapping) else {}
    else:
        output = _dicts(result.get("output"))
        for position, item in enumerate(output):
            call = replacements.get(str(item.get("call_id") or item.get("id") or ""))
            if item.get("type") in _CALL_ITEMS and call is not None:
                originals[call.id] = copy.deepcopy(item)
                output[position] = _rewritten_item(item, call)
        result["output"] = output
    return result, originals


def conversation(dialect: Dialect, body: Mapping[str, Any]) -> list[Any]:
    """The conversation items of a request body (messages, or Responses input items)."""
    if dialect.name == "responses":
        items = body.get("input")
        if isinstance(items, str):
            return [{"type": "message", "role": "user", "content": items}]
        return list(items) if isinstance(items, list) else []
    messages = body.get("messages")
    return list(messages) if isinstance(messages, list) else []


def _with_conversation(dialect: Dialect, body: Mapping[str, Any], items: list[Any]) -> JSONObject:
    key = "input" if dialect.name == "responses" else "messages"
    return {**body, key: items}


def restore_calls(
    dialect: Dialect, body: Mapping[str, Any], at: int, originals: Mapping[str, JSONObject]
) -> JSONObject:
    """``body`` with rewritten calls (by id, at or after position ``at``) put back as they were."""
    items = conversation(dialect, body)
    changed = False
    for position in range(max(at, 0), len(items)):
        item = items[position]
        if not isinstance(item, dict):
            continue
        if dialect.name == "responses":
            call_id = str(item.get("call_id") or "")
            original = originals.get(call_id)
            if original is None:
                continue
            if item.get("type") in _CALL_ITEMS:
                restored = copy.deepcopy(original)
                if "id" not in item:
                    restored.pop("id", None)
                items[position] = restored
                changed = True
            elif str(item.get("type") or "").endswith("_call_output"):
                items[position] = {**item, "type": _OUTPUT_OF[str(original.get("type"))]}
                changed = True
            continue
        key = "tool_calls" if dialect.name == "chat" else "content"
        entries = item.get(key)
        if item.get("role") != "assistant" or not isinstance(entries, list):
            continue
        replaced = [
            copy.deepcopy(originals[str(entry.get("id"))])
            if isinstance(entry, dict) and str(entry.get("id")) in originals
            else entry
            for entry in entries
        ]
        if replaced != entries:
            items[position] = {**item, key: replaced}
            changed = True
    return _with_conversation(dialect, body, items) if changed else dict(body)


def history_events(dialect: Dialect, item: Any) -> Iterator[ToolCall | str]:
    """The tool calls (assistant) and tool outputs (results) one conversation item holds."""
    if not isinstance(item, dict):
        return
    if dialect.name == "responses":
        kind = str(item.get("type") or "")
        if kind in _CALL_ITEMS:
            yield from dialect.tool_calls({"output": [item]})
        elif kind.endswith("_call_output"):
            yield _text(item.get("output"))
        return
    role = item.get("role")
    if role == "assistant":
        wrapped = {"choices": [{"message": item}]} if dialect.name == "chat" else item
        yield from dialect.tool_calls(wrapped)
    elif dialect.name == "chat" and role in ("tool", "function"):
        yield _text(item.get("content"))
    elif dialect.name == "messages" and isinstance(item.get("content"), list):
        for block in _dicts(item["content"]):
            if block.get("type") == "tool_result":
                yield _text(block.get("content"))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(part.get("text") or "") for part in value if isinstance(part, Mapping))
    return "" if value is None else json.dumps(value, ensure_ascii=False)
