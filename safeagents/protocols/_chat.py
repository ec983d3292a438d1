"""OpenAI Chat Completions (``POST /v1/chat/completions``): pi, opencode, hermes, mini-swe-agent."""

from __future__ import annotations

import copy
import time
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from .._actions import ToolCall
from ._base import Dialect, RequestInfo
from ._chat_stream import ChatAssembler
from ._common import (
    SIBLING_NOTE,
    JSONObject,
    arguments_json,
    as_dict,
    as_list,
    check_rejections,
    new_id,
    part_text,
    prefix_keys,
    prune,
    restored_entries,
    result_text,
    text_of,
)
from ._errors import openai_error
from ._requests import validate_request
from ._tokens import TokenCapture, chat_extract_tokens, chat_request_tokens, chat_strip_tokens

__all__ = ["ChatCompletions"]

_TEXT_PART_TYPES = frozenset({"text", "input_text"})


class ChatCompletions(Dialect):
    """``messages`` in, ``choices[].message.tool_calls`` out, ``role: tool`` results."""

    name = "chat"

    def parse_request(self, body: Mapping[str, Any]) -> RequestInfo:
        validate_request(self.name, body)
        messages = as_list(body.get("messages"))
        tool_names = tuple(
            str(as_dict(tool.get("function")).get("name") or tool.get("name") or "")
            for tool in as_list(body.get("tools"))
            if isinstance(tool, dict)
        )
        users = (as_dict(message) for message in messages)
        first_user = next((message for message in users if message.get("role") == "user"), {})
        return RequestInfo(
            model=str(body.get("model") or ""),
            stream=bool(body.get("stream")),
            tool_names=tool_names,
            message_count=len(messages),
            tool_result_count=sum(
                1 for message in messages if as_dict(message).get("role") in ("tool", "function")
            ),
            first_user_text=text_of(first_user.get("content")),
            prefix_keys=prefix_keys(_canonical_message(message) for message in messages),
            wants_logprobs=bool(body.get("logprobs")),
            wants_token_ids=bool(body.get("return_token_ids")),
            stream_usage=bool(as_dict(body.get("stream_options")).get("include_usage")),
        )

    def tool_calls(self, response: Mapping[str, Any]) -> list[ToolCall]:
        return [
            ToolCall.from_openai(call)
            for call in as_list(_first_message(response).get("tool_calls"))
            if isinstance(call, dict)
        ]

    def without_calls(
        self, response: Mapping[str, Any], blocked_ids: Collection[str]
    ) -> JSONObject:
        filtered = copy.deepcopy(dict(response))
        blocked = set(blocked_ids)
        for choice in as_list(filtered.get("choices")):
            message = as_dict(as_dict(choice).get("message"))
            if not message:
                continue
            calls = as_list(message.get("tool_calls"))
            remaining = [call for call in calls if as_dict(call).get("id") not in blocked]
            if remaining:
                message["tool_calls"] = remaining
                if choice.get("finish_reason") != "length":
                    choice["finish_reason"] = "tool_calls"
                continue
            message.pop("tool_calls", None)
            if message.get("content") is None:
                message["content"] = ""
            if choice.get("finish_reason") in ("tool_calls", "function_call"):
                choice["finish_reason"] = "stop"
        return filtered

    def hidden_items(
        self, response: Mapping[str, Any], rejections: Mapping[str, str]
    ) -> list[JSONObject]:
        message = _first_message(response)
        calls = [copy.deepcopy(call) for call in as_list(message.get("tool_calls"))]
        call_ids = [str(as_dict(call).get("id") or "") for call in calls]
        check_rejections(call_ids, rejections)
        assistant: JSONObject = {
            "role": "assistant",
            "content": message.get("content"),
            "tool_calls": calls,
        }
        results: list[JSONObject] = [
            {
                "role": "tool",
                "tool_call_id": call_id,
                "content": rejections.get(call_id, SIBLING_NOTE),
            }
            for call_id in call_ids
        ]
        return [assistant, *results]

    def calls_only(self, response: Mapping[str, Any]) -> JSONObject:
        result = copy.deepcopy(dict(response))
        message = _first_message(result)
        for key in ("reasoning_content", "reasoning", "refusal"):
            message.pop(key, None)
        message["content"] = None
        return result

    def rewrite_calls(
        self, response: Mapping[str, Any], replacements: Mapping[str, ToolCall]
    ) -> tuple[JSONObject, dict[str, JSONObject]]:
        result = copy.deepcopy(dict(response))
        originals: dict[str, JSONObject] = {}
        for entry in as_list(_first_message(result).get("tool_calls")):
            call = replacements.get(str(entry.get("id") or "")) if isinstance(entry, dict) else None
            if call is not None:
                originals[call.id] = copy.deepcopy(entry)
                entry["function"] = {"name": call.name, "arguments": arguments_json(call.arguments)}
        return result, originals

    def _restored(self, item: JSONObject, originals: Mapping[str, JSONObject]) -> JSONObject | None:
        restored = restored_entries(item, "tool_calls", originals)
        content = self.action_text(item)
        if restored is not None or content is None:
            return restored
        for original in originals.values():
            if original.get("replaced_by") == content and "content" in original:
                return {**item, "content": original["content"]}
        return None

    def action_text(self, message: Any) -> str | None:
        """The words of an assistant message (its content, not its reasoning), where a
        text-mode harness reads its action; ``None`` for any other message."""
        if as_dict(message).get("role") != "assistant":
            return None
        return part_text(message.get("content"))

    def rewrite_content(
        self, response: Mapping[str, Any], content: str
    ) -> tuple[JSONObject, JSONObject]:
        """A deep copy whose assistant message says ``content`` instead, and the original for
        :meth:`restore_calls` (under the id of the text-mode call it replaces)."""
        result = copy.deepcopy(dict(response))
        message = _first_message(result)
        original = {"content": copy.deepcopy(message.get("content")), "replaced_by": content}
        message["content"] = content
        return result, original

    def observed_items(self, response: Mapping[str, Any], output: str) -> list[JSONObject]:
        """The assistant turn of ``response`` and a user message with ``output``: a withheld
        text-mode action and its observation, the hidden pair of a re-ask."""
        content = _first_message(response).get("content")
        return [{"role": "assistant", "content": content}, {"role": "user", "content": output}]

    def history_events(self, item: Any) -> Iterator[ToolCall | str]:
        role = as_dict(item).get("role")
        if role == "assistant":
            yield from self.tool_calls({"choices": [{"message": item}]})
        elif role in ("tool", "function"):
            yield result_text(item.get("content"))

    def user_text(self, item: Any) -> str | None:
        if as_dict(item).get("role") != "user":
            return None
        return part_text(item.get("content"))

    def system_text(self, body: Mapping[str, Any]) -> str:
        parts = []
        for message in as_list(body.get("messages")):
            if not isinstance(message, Mapping):
                continue
            if message.get("role") not in ("system", "developer"):
                break
            parts.append(part_text(message.get("content")))
        return "\n".join(parts)

    def transcript_messages(self, body: Mapping[str, Any]) -> list[JSONObject]:
        return [
            dict(message)
            for message in as_list(body.get("messages"))
            if isinstance(message, Mapping)
        ]

    def response_messages(self, response: Mapping[str, Any]) -> list[JSONObject]:
        choices = as_list(response.get("choices"))
        message = as_dict(choices[0]).get("message") if choices else None
        return [dict(message)] if isinstance(message, dict) else []

    def response_text(self, response: Mapping[str, Any]) -> str:
        contents = (
            as_dict(as_dict(choice).get("message")).get("content")
            for choice in as_list(response.get("choices"))
        )
        return "\n".join(text for text in contents if isinstance(text, str) and text).strip()

    def text_response(self, request: RequestInfo, text: str) -> JSONObject:
        return {
            "id": new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }

    def error_body(self, status: int, message: str, *, kind: str) -> JSONObject:
        return openai_error(status, message, kind=kind)

    def assembler(self, request: RequestInfo | None = None) -> ChatAssembler:
        return ChatAssembler(request)

    def request_token_fields(self, body: Mapping[str, Any]) -> JSONObject:
        return chat_request_tokens(body)

    def extract_tokens(self, response: Mapping[str, Any]) -> TokenCapture | None:
        return chat_extract_tokens(response)

    def strip_token_fields(
        self, response: Mapping[str, Any], request: RequestInfo | None = None
    ) -> JSONObject:
        return chat_strip_tokens(
            response,
            keep_logprobs=request is not None and request.wants_logprobs,
            keep_token_ids=request is not None and request.wants_token_ids,
        )


def _first_message(response: Mapping[str, Any]) -> JSONObject:
    choices = as_list(response.get("choices"))
    return as_dict(as_dict(choices[0]).get("message")) if choices else {}


def _canonical_message(message: Any) -> Any:
    """The message as hashed: ``None``/empty content, cache hints and part-vs-string spelling
    do not change the key."""
    canonical = prune(message, drop=("cache_control",))
    if not isinstance(canonical, dict):
        return canonical
    content = canonical.get("content")
    if isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") in _TEXT_PART_TYPES for part in content
    ):
        canonical["content"] = "".join(str(part.get("text") or "") for part in content)
    if canonical.get("content") in ("", []):
        canonical.pop("content")
    return canonical
