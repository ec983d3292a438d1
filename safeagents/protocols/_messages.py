"""Anthropic Messages (``POST /v1/messages``): claude-code, and pi/hermes/opencode optionally."""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

from .._actions import ToolCall
from ._base import Dialect, RequestInfo
from ._common import (
    SIBLING_NOTE,
    JSONObject,
    as_dict,
    as_list,
    chat_call,
    check_rejections,
    new_id,
    part_text,
    prefix_keys,
    prune,
    restored_entries,
    result_text,
    transcript_text,
)
from ._errors import anthropic_error
from ._messages_stream import MessagesAssembler
from ._requests import validate_request
from ._tokens import TokenCapture, envelope_extract_tokens, envelope_strip_tokens

__all__ = ["AnthropicMessages"]


class AnthropicMessages(Dialect):
    """``messages`` in, ``tool_use`` content blocks out, ``tool_result`` blocks back."""

    name = "messages"

    def parse_request(self, body: Mapping[str, Any]) -> RequestInfo:
        validate_request(self.name, body)
        messages = as_list(body.get("messages"))
        blocks = [block for message in messages for block in _blocks(as_dict(message))]
        first_user = next(
            (
                as_dict(message)
                for message in messages
                if as_dict(message).get("role") == "user" and _user_text(as_dict(message))
            ),
            {},
        )
        return RequestInfo(
            model=str(body.get("model") or ""),
            stream=bool(body.get("stream")),
            tool_names=tuple(
                str(as_dict(tool).get("name") or as_dict(tool).get("type") or "")
                for tool in as_list(body.get("tools"))
            ),
            message_count=len(messages),
            tool_result_count=sum(1 for block in blocks if block.get("type") == "tool_result"),
            first_user_text=_user_text(first_user),
            prefix_keys=prefix_keys(_canonical_message(message) for message in messages),
        )

    def tool_calls(self, response: Mapping[str, Any]) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for block in _blocks(response):
            if block.get("type") != "tool_use":
                continue
            arguments = block.get("input")
            if not isinstance(arguments, Mapping):
                arguments = {"value": arguments}
            calls.append(
                ToolCall(str(block.get("id") or ""), str(block.get("name") or ""), arguments)
            )
        return calls

    def without_calls(
        self, response: Mapping[str, Any], blocked_ids: Collection[str]
    ) -> JSONObject:
        filtered = copy.deepcopy(dict(response))
        blocked = set(blocked_ids)
        content = [
            block
            for block in as_list(filtered.get("content"))
            if not (
                as_dict(block).get("type") == "tool_use" and as_dict(block).get("id") in blocked
            )
        ]
        filtered["content"] = content
        if any(as_dict(block).get("type") == "tool_use" for block in content):
            if filtered.get("stop_reason") != "max_tokens":
                filtered["stop_reason"] = "tool_use"
        elif filtered.get("stop_reason") == "tool_use":
            filtered["stop_reason"] = "end_turn"
        return filtered

    def hidden_items(
        self, response: Mapping[str, Any], rejections: Mapping[str, str]
    ) -> list[JSONObject]:
        blocks = _blocks(response)
        call_ids = [
            str(block.get("id") or "") for block in blocks if block.get("type") == "tool_use"
        ]
        check_rejections(call_ids, rejections)
        # the API refuses empty text blocks in a request
        replayed = [
            copy.deepcopy(block)
            for block in blocks
            if not (block.get("type") == "text" and not block.get("text"))
        ]
        results: list[JSONObject] = []
        for call_id in call_ids:
            result: JSONObject = {"type": "tool_result", "tool_use_id": call_id}
            if call_id in rejections:
                result.update(content=rejections[call_id], is_error=True)
            else:
                result["content"] = SIBLING_NOTE
            results.append(result)
        return [{"role": "assistant", "content": replayed}, {"role": "user", "content": results}]

    def calls_only(self, response: Mapping[str, Any]) -> JSONObject:
        result = copy.deepcopy(dict(response))
        result["content"] = [
            block
            for block in as_list(result.get("content"))
            if isinstance(block, dict) and block.get("type") == "tool_use"
        ]
        return result

    def rewrite_calls(
        self, response: Mapping[str, Any], replacements: Mapping[str, ToolCall]
    ) -> tuple[JSONObject, dict[str, JSONObject]]:
        result = copy.deepcopy(dict(response))
        originals: dict[str, JSONObject] = {}
        for block in as_list(result.get("content")):
            call = replacements.get(str(block.get("id") or "")) if isinstance(block, dict) else None
            if call is not None and block.get("type") == "tool_use":
                originals[call.id] = copy.deepcopy(block)
                block["name"] = call.name
                block["input"] = dict(call.arguments) if isinstance(call.arguments, Mapping) else {}
        return result, originals

    def _restored(self, item: JSONObject, originals: Mapping[str, JSONObject]) -> JSONObject | None:
        return restored_entries(item, "content", originals)

    def history_events(self, item: Any) -> Iterator[ToolCall | str]:
        if not isinstance(item, dict):
            return
        if item.get("role") == "assistant":
            yield from self.tool_calls(item)
        elif isinstance(item.get("content"), list):
            for block in item["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    yield result_text(block.get("content"))

    def user_text(self, item: Any) -> str | None:
        if not isinstance(item, dict) or item.get("role") != "user":
            return None
        content = item.get("content")
        if isinstance(content, list):
            blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
            if not blocks:
                return None
            content = blocks
        return part_text(content)

    def system_text(self, body: Mapping[str, Any]) -> str:
        return part_text(body.get("system"))

    def transcript_messages(self, body: Mapping[str, Any]) -> list[JSONObject]:
        system = transcript_text(body.get("system"))
        head = [{"role": "system", "content": system}] if system else []
        return head + _chat_messages(as_list(body.get("messages")))

    def response_messages(self, response: Mapping[str, Any]) -> list[JSONObject]:
        return _chat_messages([{**response, "role": "assistant"}])

    def response_text(self, response: Mapping[str, Any]) -> str:
        texts = [
            str(block.get("text") or "")
            for block in _blocks(response)
            if block.get("type") == "text"
        ]
        return "\n".join(text for text in texts if text).strip()

    def text_response(self, request: RequestInfo, text: str) -> JSONObject:
        return {
            "id": new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": request.model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 0,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 0,
            },
        }

    def error_body(self, status: int, message: str, *, kind: str) -> JSONObject:
        return anthropic_error(status, message, kind=kind)

    def assembler(self, request: RequestInfo | None = None) -> MessagesAssembler:
        return MessagesAssembler(request)

    def extract_tokens(self, response: Mapping[str, Any]) -> TokenCapture | None:
        return envelope_extract_tokens(response)

    def strip_token_fields(
        self, response: Mapping[str, Any], request: RequestInfo | None = None
    ) -> JSONObject:
        return envelope_strip_tokens(response)


def _blocks(message: Mapping[str, Any]) -> list[JSONObject]:
    """Content blocks of a message; string content is one text block."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in as_list(content) if isinstance(block, dict)]


def _user_text(message: Mapping[str, Any]) -> str:
    texts = [
        str(block.get("text") or "") for block in _blocks(message) if block.get("type") == "text"
    ]
    return "\n".join(text for text in texts if text)


def _chat_messages(messages: Iterable[Any]) -> list[JSONObject]:
    """Messages as OpenAI chat messages: ``tool_use`` blocks become the assistant's tool
    calls, each ``tool_result`` block a ``tool`` message."""
    out: list[JSONObject] = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        blocks = _blocks(message)
        role = str(message.get("role") or "user")
        text = "\n".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
        if role == "assistant":
            calls = [
                chat_call(b.get("id"), b.get("name"), b.get("input"))
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            entry: JSONObject = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                result = {"role": "tool", "tool_call_id": str(block.get("tool_use_id") or "")}
                out.append({**result, "content": transcript_text(block.get("content"))})
        if text:
            out.append({"role": role, "content": text})
    return out


def _canonical_message(message: Any) -> Any:
    """The message as hashed: cache hints (they move every turn) and string-vs-block spelling
    do not change the key."""
    canonical = prune(message, drop=("cache_control",))
    if isinstance(canonical, dict) and isinstance(canonical.get("content"), str):
        canonical["content"] = [{"type": "text", "text": canonical["content"]}]
    return canonical
