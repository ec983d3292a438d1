"""OpenAI Responses (``POST /v1/responses``): codex, opencode/pi with the responses API."""

from __future__ import annotations

import copy
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

from .._actions import ToolCall
from ._base import Dialect, RequestInfo
from ._common import (
    SIBLING_NOTE,
    JSONObject,
    arguments_json,
    as_dict,
    as_list,
    chat_call,
    check_rejections,
    new_id,
    part_text,
    prefix_keys,
    prune,
    result_text,
    text_of,
    transcript_text,
)
from ._errors import openai_error
from ._requests import validate_request
from ._responses_stream import ResponsesAssembler
from ._tokens import TokenCapture, envelope_extract_tokens, envelope_strip_tokens

__all__ = ["CALL_ITEM_TYPES", "Responses"]

CALL_ITEM_TYPES = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_TEXT_PART_TYPES = frozenset({"input_text", "output_text", "text"})
_RESULT_TYPES = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    # codex answers local_shell_call items with function_call_output, keyed by call_id
    "local_shell_call": "function_call_output",
}


class Responses(Dialect):
    """``input`` items in, ``output`` items out; results are ``*_call_output`` items."""

    name = "responses"

    def parse_request(self, body: Mapping[str, Any]) -> RequestInfo:
        validate_request(self.name, body)
        items = _input_items(body)
        first_user = next(
            (as_dict(item) for item in items if as_dict(item).get("role") == "user"), {}
        )
        return RequestInfo(
            model=str(body.get("model") or ""),
            stream=bool(body.get("stream")),
            tool_names=tuple(_tool_name(as_dict(tool)) for tool in as_list(body.get("tools"))),
            message_count=len(items),
            tool_result_count=sum(
                1 for item in items if str(as_dict(item).get("type") or "").endswith("_call_output")
            ),
            first_user_text=text_of(first_user.get("content")),
            prefix_keys=prefix_keys(_canonical_item(item) for item in items),
        )

    def tool_calls(self, response: Mapping[str, Any]) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for raw_item in as_list(response.get("output")):
            item = as_dict(raw_item)
            kind = item.get("type")
            call_id = str(item.get("call_id") or item.get("id") or "")
            if kind == "function_call":
                raw = {"id": call_id, "name": item.get("name"), "arguments": item.get("arguments")}
                calls.append(ToolCall.from_openai(raw))
            elif kind == "custom_tool_call":
                text = item.get("input")
                name = str(item.get("name") or "")
                calls.append(ToolCall(call_id, name, text if isinstance(text, str) else ""))
            elif kind == "local_shell_call":
                calls.append(ToolCall(call_id, "local_shell", as_dict(item.get("action"))))
        return calls

    def without_calls(
        self, response: Mapping[str, Any], blocked_ids: Collection[str]
    ) -> JSONObject:
        filtered = copy.deepcopy(dict(response))
        blocked = set(blocked_ids)
        filtered["output"] = [
            item for item in as_list(filtered.get("output")) if _call_id(item) not in blocked
        ]
        return filtered

    def hidden_items(
        self, response: Mapping[str, Any], rejections: Mapping[str, str]
    ) -> list[JSONObject]:
        output = [as_dict(item) for item in as_list(response.get("output"))]
        calls = [item for item in output if item.get("type") in CALL_ITEM_TYPES]
        check_rejections([_call_id(item) or "" for item in calls], rejections)
        # ids of output items are dropped, as codex does: they reference nothing with store=false
        replayed = [
            {key: copy.deepcopy(value) for key, value in item.items() if key != "id"}
            for item in output
        ]
        results: list[JSONObject] = [
            {
                "type": _RESULT_TYPES[str(item["type"])],
                "call_id": _call_id(item),
                "output": rejections.get(str(_call_id(item)), SIBLING_NOTE),
            }
            for item in calls
        ]
        return [*replayed, *results]

    def calls_only(self, response: Mapping[str, Any]) -> JSONObject:
        result = copy.deepcopy(dict(response))
        result["output"] = [
            item
            for item in as_list(result.get("output"))
            if isinstance(item, dict) and item.get("type") in CALL_ITEM_TYPES
        ]
        return result

    def rewrite_calls(
        self, response: Mapping[str, Any], replacements: Mapping[str, ToolCall]
    ) -> tuple[JSONObject, dict[str, JSONObject]]:
        result = copy.deepcopy(dict(response))
        originals: dict[str, JSONObject] = {}
        output = [item for item in as_list(result.get("output")) if isinstance(item, dict)]
        for position, item in enumerate(output):
            call = replacements.get(str(item.get("call_id") or item.get("id") or ""))
            if item.get("type") in CALL_ITEM_TYPES and call is not None:
                originals[call.id] = copy.deepcopy(item)
                output[position] = _rewritten_item(item, call)
        result["output"] = output
        return result, originals

    conversation_field = "input"

    def conversation(self, body: Mapping[str, Any]) -> list[Any]:
        return list(_input_items(body))

    def _restored(self, item: JSONObject, originals: Mapping[str, JSONObject]) -> JSONObject | None:
        original = originals.get(str(item.get("call_id") or ""))
        if original is None:
            return None
        if item.get("type") in CALL_ITEM_TYPES:
            restored = copy.deepcopy(original)
            if "id" not in item:
                restored.pop("id", None)
            return restored
        if str(item.get("type") or "").endswith("_call_output"):
            return {**item, "type": _RESULT_TYPES[str(original.get("type"))]}
        return None

    def history_events(self, item: Any) -> Iterator[ToolCall | str]:
        kind = str(as_dict(item).get("type") or "")
        if kind in CALL_ITEM_TYPES:
            yield from self.tool_calls({"output": [item]})
        elif kind.endswith("_call_output"):
            yield result_text(item.get("output"))

    def user_text(self, item: Any) -> str | None:
        message = as_dict(item)
        if message.get("role") != "user" or message.get("type", "message") != "message":
            return None
        return part_text(message.get("content"))

    def system_text(self, body: Mapping[str, Any]) -> str:
        parts = [part_text(body.get("instructions"))]
        for item in as_list(body.get("input")):
            if isinstance(item, Mapping) and item.get("role") in ("system", "developer"):
                parts.append(part_text(item.get("content")))
        return "\n".join(part for part in parts if part)

    def transcript_messages(self, body: Mapping[str, Any]) -> list[JSONObject]:
        return _chat_messages(self.conversation(body), body.get("instructions"))

    def response_messages(self, response: Mapping[str, Any]) -> list[JSONObject]:
        return _chat_messages(as_list(response.get("output")))

    def response_text(self, response: Mapping[str, Any]) -> str:
        texts = [
            str(as_dict(part).get("text") or "")
            for item in as_list(response.get("output"))
            if as_dict(item).get("type") == "message"
            for part in as_list(item.get("content"))
        ]
        return "\n".join(text for text in texts if text).strip()

    def text_response(self, request: RequestInfo, text: str) -> JSONObject:
        message = {
            "type": "message",
            "id": new_id("msg_"),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        return {
            "id": new_id("resp_"),
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "model": request.model,
            "output": [message],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "text": {"format": {"type": "text"}},
            "usage": {
                "input_tokens": 0,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 0,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 0,
            },
        }

    def error_body(self, status: int, message: str, *, kind: str) -> JSONObject:
        return openai_error(status, message, kind=kind)

    def assembler(self, request: RequestInfo | None = None) -> ResponsesAssembler:
        return ResponsesAssembler(request)

    def extract_tokens(self, response: Mapping[str, Any]) -> TokenCapture | None:
        return envelope_extract_tokens(response)

    def strip_token_fields(
        self, response: Mapping[str, Any], request: RequestInfo | None = None
    ) -> JSONObject:
        return envelope_strip_tokens(response)


def _input_items(body: Mapping[str, Any]) -> list[Any]:
    value = body.get("input")
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return as_list(value)


def _tool_name(tool: JSONObject) -> str:
    if tool.get("type") in ("function", "custom", None):
        return str(tool.get("name") or as_dict(tool.get("function")).get("name") or "")
    return str(tool.get("type"))


def _call_id(item: Any) -> str | None:
    item = as_dict(item)
    if item.get("type") not in CALL_ITEM_TYPES:
        return None
    return str(item.get("call_id") or item.get("id") or "")


def _rewritten_item(original: JSONObject, call: ToolCall) -> JSONObject:
    base: JSONObject = {key: original[key] for key in ("id", "call_id") if key in original}
    base["status"] = "completed"
    if call.name == "local_shell":
        action = call.arguments if isinstance(call.arguments, Mapping) else {}
        return {**base, "type": "local_shell_call", "action": dict(action)}
    arguments = arguments_json(call.arguments)
    return {**base, "type": "function_call", "name": call.name, "arguments": arguments}


def _chat_messages(items: Iterable[Any], instructions: Any = None) -> list[JSONObject]:
    """Input or output items as OpenAI chat messages; consecutive calls share one assistant."""
    out: list[JSONObject] = []
    if isinstance(instructions, str) and instructions:
        out.append({"role": "system", "content": instructions})
    for item in items:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            role = str(item.get("role") or "user")
            out.append({"role": role, "content": transcript_text(item.get("content"))})
        elif kind in CALL_ITEM_TYPES:
            call_id = item.get("call_id") or item.get("id")
            if kind == "function_call":
                call = chat_call(call_id, item.get("name"), item.get("arguments"))
            elif kind == "custom_tool_call":
                call = chat_call(call_id, item.get("name"), str(item.get("input") or ""))
            else:
                call = chat_call(call_id, "local_shell", item.get("action"))
            last = out[-1] if out else None
            if last is not None and last.get("role") == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif isinstance(kind, str) and kind.endswith("_call_output"):
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(item.get("call_id") or ""),
                    "content": transcript_text(item.get("output")),
                }
            )
    return out


def _canonical_item(item: Any) -> Any:
    """The item as hashed: ids, statuses, defaults and part-vs-string spelling are ignored."""
    canonical = prune(item, drop=("id", "status", "cache_control"))
    if not isinstance(canonical, dict):
        return canonical
    if "role" in canonical:
        canonical.setdefault("type", "message")
    content = canonical.get("content")
    if isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") in _TEXT_PART_TYPES for part in content
    ):
        canonical["content"] = "".join(str(part.get("text") or "") for part in content)
    return canonical
