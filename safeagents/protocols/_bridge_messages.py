"""Anthropic Messages requests as Chat Completions, and chat answers back as Messages.

Client tools map to functions (server tools such as web search are left out); ``tool_result``
blocks become ``tool`` messages ahead of the user's text; ``thinking`` blocks are replayed as
the assistant message's ``reasoning``, and the engine's reasoning comes back as a thinking
block.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._bridge import (
    ChatBridge,
    ChatTurn,
    copy_common,
    function_tool,
    parsed_arguments,
    thinking_switch,
)
from ._bridge_stream import EventWriter
from ._common import JSONObject, as_dict, as_list, part_text, transcript_text
from ._messages import AnthropicMessages
from ._sse import encode_json

__all__ = ["MessagesBridge"]

SIGNATURE = "safeagents"
"""The signature of a thinking block the proxy made (an opaque string to the harness)."""
_STOP = {"length": "max_tokens", "tool_calls": "tool_use"}


def _blocks(content: Any) -> list[JSONObject]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [as_dict(block) for block in as_list(content)]


def _messages(body: Mapping[str, Any]) -> list[JSONObject]:
    out: list[JSONObject] = []
    system = part_text(body.get("system"))
    if system:
        out.append({"role": "system", "content": system})
    for raw in as_list(body.get("messages")):
        message = as_dict(raw)
        blocks = _blocks(message.get("content"))
        if message.get("role") == "assistant":
            entry: JSONObject = {"role": "assistant", "content": ""}
            reasoning = "".join(
                str(b.get("thinking") or "") for b in blocks if b.get("type") == "thinking"
            )
            if reasoning:
                entry["reasoning"] = reasoning
            entry["content"] = "".join(
                str(b.get("text") or "") for b in blocks if b.get("type") == "text"
            )
            calls = [
                {
                    "id": str(b.get("id") or ""),
                    "type": "function",
                    "function": {
                        "name": str(b.get("name") or ""),
                        "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False),
                    },
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": str(block.get("tool_use_id") or ""),
                        "content": transcript_text(block.get("content")),
                    }
                )
        text = "\n".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
        if text or not any(b.get("type") == "tool_result" for b in blocks):
            out.append({"role": str(message.get("role") or "user"), "content": text})
    return out


def _tools(body: Mapping[str, Any]) -> list[JSONObject]:
    return [
        function_tool(
            str(tool.get("name") or ""), tool.get("description"), tool.get("input_schema")
        )
        for tool in map(as_dict, as_list(body.get("tools")))
        if tool.get("type") in (None, "custom") and tool.get("name")
    ]


def _tool_choice(choice: Any) -> Any:
    choice = as_dict(choice)
    kind = choice.get("type")
    if kind == "any":
        return "required"
    if kind == "none":
        return "none"
    if kind == "tool" and choice.get("name"):
        return {"type": "function", "function": {"name": choice["name"]}}
    return "auto"


class MessagesBridge(ChatBridge):
    dialect = AnthropicMessages()

    def chat_request(self, body: Mapping[str, Any]) -> JSONObject:
        chat: JSONObject = {"messages": _messages(body)}
        copy_common(body, chat, max_tokens_key="max_tokens")
        kind = as_dict(body.get("thinking")).get("type")
        thinking_switch(chat, None if kind is None else kind != "disabled")
        stops = [s for s in as_list(body.get("stop_sequences")) if isinstance(s, str)]
        if stops:
            chat["stop"] = stops
        tools = _tools(body)
        if tools:
            chat["tools"] = tools
            choice = as_dict(body.get("tool_choice"))
            chat["tool_choice"] = _tool_choice(choice)
            if choice.get("disable_parallel_tool_use") is True:
                chat["parallel_tool_calls"] = False
        return chat

    def from_chat(self, turn: ChatTurn, request: Mapping[str, Any]) -> JSONObject:
        content: list[JSONObject] = []
        if turn.reasoning:
            content.append({"type": "thinking", "thinking": turn.reasoning, "signature": SIGNATURE})
        if turn.text:
            content.append({"type": "text", "text": turn.text})
        for call in turn.calls:
            arguments = parsed_arguments(call.arguments)
            content.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}
            )
        stop = "tool_use" if turn.calls else _STOP.get(turn.finish_reason, "end_turn")
        return {
            "id": f"msg_{turn.base}",
            "type": "message",
            "role": "assistant",
            "model": turn.model or str(request.get("model") or ""),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": turn.prompt_tokens, "output_tokens": turn.completion_tokens},
        }

    def writer(self, request: Mapping[str, Any]) -> EventWriter:
        return _MessagesWriter(request)


class _MessagesWriter(EventWriter):
    def __init__(self, request: Mapping[str, Any]) -> None:
        super().__init__()
        self.request = request
        self.index = -1
        self.open_block = ""

    def open(self) -> bytes:
        message: JSONObject = {
            "id": f"msg_{self.base}",
            "type": "message",
            "role": "assistant",
            "model": self.model or str(self.request.get("model") or ""),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return encode_json({"type": "message_start", "message": message}, "message_start")

    def _block(self, kind: str, delta: JSONObject) -> bytes:
        out = b""
        if self.open_block != kind:
            if self.open_block == "thinking":
                signature = {"type": "signature_delta", "signature": SIGNATURE}
                out += self._event("content_block_delta", delta=signature)
            if self.open_block:
                out += self._event("content_block_stop")
            self.index += 1
            self.open_block = kind
            start: JSONObject = {"type": kind, kind: ""}
            if kind == "thinking":
                start["signature"] = ""
            out += self._event("content_block_start", content_block=start)
        return out + self._event("content_block_delta", delta=delta)

    def _event(self, kind: str, **body: Any) -> bytes:
        return encode_json({"type": kind, "index": self.index, **body}, kind)

    def reasoning(self, piece: str) -> bytes:
        return self._block("thinking", {"type": "thinking_delta", "thinking": piece})

    def text(self, piece: str) -> bytes:
        return self._block("text", {"type": "text_delta", "text": piece})
