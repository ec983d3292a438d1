"""OpenAI Responses requests as Chat Completions, and chat answers back as Responses.

Function tools map one to one; a ``custom`` (freeform) tool becomes a function taking one
string ``input`` and its calls become ``custom_tool_call`` items again; built-in tools the
engine cannot run (web search, local shell) are left out. ``reasoning`` items are replayed
as the next assistant message's ``reasoning``; the translated answer's reasoning item also
carries its text in ``encrypted_content``, which harnesses replay verbatim (codex does not
send reasoning ``content`` back).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from ._bridge import ChatBridge, ChatTurn, copy_common, function_tool, thinking_switch
from ._bridge_stream import EventWriter
from ._common import JSONObject, as_dict, as_list, transcript_text
from ._responses import Responses
from ._sse import encode_json

__all__ = ["ResponsesBridge", "reasoning_text"]

REASONING_PREFIX = "safeagents-reasoning:"
_INPUT_SCHEMA: JSONObject = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "the tool's freeform input"}},
    "required": ["input"],
}


def reasoning_text(item: Mapping[str, Any]) -> str:
    """The text of a replayed reasoning item: its content, our own encrypted content, or
    its summary."""
    parts = [
        str(as_dict(part).get("text") or "")
        for part in as_list(item.get("content"))
        if as_dict(part).get("type") in ("reasoning_text", "text")
    ]
    if any(parts):
        return "".join(parts)
    sealed = item.get("encrypted_content")
    if isinstance(sealed, str) and sealed.startswith(REASONING_PREFIX):
        return sealed[len(REASONING_PREFIX) :]
    return "\n".join(str(as_dict(part).get("text") or "") for part in as_list(item.get("summary")))


def _custom_names(request: Mapping[str, Any]) -> set[str]:
    return {
        str(as_dict(tool).get("name") or "")
        for tool in as_list(request.get("tools"))
        if as_dict(tool).get("type") == "custom"
    }


def _tools(request: Mapping[str, Any]) -> list[JSONObject]:
    tools: list[JSONObject] = []
    for raw in as_list(request.get("tools")):
        tool = as_dict(raw)
        kind = tool.get("type")
        if kind == "function":
            nested = as_dict(tool.get("function"))
            name = tool.get("name") or nested.get("name")
            description = tool.get("description") or nested.get("description")
            parameters = tool.get("parameters") or nested.get("parameters")
            tools.append(function_tool(str(name or ""), description, parameters))
        elif kind == "custom":
            tools.append(
                function_tool(str(tool.get("name") or ""), tool.get("description"), _INPUT_SCHEMA)
            )
    return tools


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, str):
        return choice
    choice = as_dict(choice)
    if choice.get("type") in ("function", "custom") and choice.get("name"):
        return {"type": "function", "function": {"name": choice["name"]}}
    return "auto"


class _Messages:
    """Chat messages built from input items: reasoning waits for its assistant message."""

    def __init__(self) -> None:
        self.out: list[JSONObject] = []
        self.reasoning = ""

    def assistant(self) -> JSONObject:
        last = self.out[-1] if self.out else None
        if last is None or last.get("role") != "assistant" or self.reasoning:
            last = {"role": "assistant", "content": ""}
            if self.reasoning:
                last["reasoning"] = self.reasoning
                self.reasoning = ""
            self.out.append(last)
        return last

    def add(self, item: Mapping[str, Any]) -> None:
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "reasoning":
            self.reasoning += reasoning_text(item)
        elif kind == "message":
            role = str(item.get("role") or "user")
            text = transcript_text(item.get("content"))
            if role == "assistant":
                message = self.assistant()
                message["content"] = (str(message.get("content") or "") + text) or ""
            else:
                self.out.append(
                    {"role": "system" if role == "developer" else role, "content": text}
                )
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            if kind == "function_call":
                name, arguments = item.get("name"), item.get("arguments")
            elif kind == "custom_tool_call":
                name, arguments = item.get("name"), _input_json(item.get("input"))
            else:
                name, arguments = "local_shell", _json(item.get("action"))
            call = {
                "id": str(item.get("call_id") or item.get("id") or ""),
                "type": "function",
                "function": {
                    "name": str(name or ""),
                    "arguments": arguments if isinstance(arguments, str) else "{}",
                },
            }
            self.assistant().setdefault("tool_calls", []).append(call)
        elif isinstance(kind, str) and kind.endswith("_call_output"):
            self.out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(item.get("call_id") or ""),
                    "content": transcript_text(item.get("output")),
                }
            )


def _json(value: Any) -> str:
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def _input_json(text: Any) -> str:
    return _json({"input": text if isinstance(text, str) else ""})


def _leading_system(messages: list[JSONObject], instructions: Any) -> list[JSONObject]:
    """The instructions and the system/developer messages before the first other message,
    merged into one leading system message (chat templates expect at most one, first)."""
    texts = [instructions] if isinstance(instructions, str) and instructions else []
    position = 0
    while position < len(messages) and messages[position].get("role") == "system":
        texts.append(str(messages[position].get("content") or ""))
        position += 1
    head = [{"role": "system", "content": "\n\n".join(texts)}] if texts else []
    return head + messages[position:]


class ResponsesBridge(ChatBridge):
    dialect = Responses()

    def chat_request(self, body: Mapping[str, Any]) -> JSONObject:
        builder = _Messages()
        for item in self.dialect.conversation(body):
            if isinstance(item, Mapping):
                builder.add(item)
        chat: JSONObject = {"messages": _leading_system(builder.out, body.get("instructions"))}
        copy_common(body, chat, max_tokens_key="max_output_tokens")
        effort = as_dict(body.get("reasoning")).get("effort")
        thinking_switch(chat, None if effort is None else effort != "none")
        tools = _tools(body)
        if tools:
            chat["tools"] = tools
            chat["tool_choice"] = _tool_choice(body.get("tool_choice", "auto"))
            if isinstance(body.get("parallel_tool_calls"), bool):
                chat["parallel_tool_calls"] = body["parallel_tool_calls"]
        return chat

    def from_chat(self, turn: ChatTurn, request: Mapping[str, Any]) -> JSONObject:
        output: list[JSONObject] = []
        if turn.reasoning:
            output.append(reasoning_item(turn.base, turn.reasoning))
        if turn.text:
            output.append(message_item(turn.base, turn.text, "completed"))
        custom = _custom_names(request)
        for index, call in enumerate(turn.calls):
            item_id = f"fc_{turn.base}_{index}"
            if call.name in custom:
                value = as_dict(_loads(call.arguments)).get("input")
                output.append(
                    {
                        "type": "custom_tool_call",
                        "id": item_id,
                        "status": "completed",
                        "call_id": call.id,
                        "name": call.name,
                        "input": value if isinstance(value, str) else call.arguments,
                    }
                )
            else:
                output.append(
                    {
                        "type": "function_call",
                        "id": item_id,
                        "status": "completed",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                    }
                )
        truncated = turn.finish_reason == "length"
        return {
            "id": f"resp_{turn.base}",
            "object": "response",
            "created_at": turn.created or int(time.time()),
            "status": "incomplete" if truncated else "completed",
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
            "model": turn.model or str(request.get("model") or ""),
            "output": output,
            "parallel_tool_calls": bool(request.get("parallel_tool_calls", True)),
            "tool_choice": request.get("tool_choice", "auto"),
            "tools": [],
            "usage": {
                "input_tokens": turn.prompt_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": turn.completion_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": turn.prompt_tokens + turn.completion_tokens,
            },
        }

    def writer(self, request: Mapping[str, Any]) -> EventWriter:
        return _ResponsesWriter(request)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def reasoning_item(base: str, text: str) -> JSONObject:
    return {
        "type": "reasoning",
        "id": f"rs_{base}",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": text}],
        "encrypted_content": REASONING_PREFIX + text,
    }


def message_item(base: str, text: str, status: str) -> JSONObject:
    return {
        "type": "message",
        "id": f"msg_{base}",
        "status": status,
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


class _ResponsesWriter(EventWriter):
    def __init__(self, request: Mapping[str, Any]) -> None:
        super().__init__()
        self.request = request
        self.sequence = 0
        self.index = -1
        self.open_item = ""
        self.reasoning_buffer = ""

    def emit(self, kind: str, body: JSONObject) -> bytes:
        self.sequence += 1
        return encode_json({"type": kind, "sequence_number": self.sequence - 1, **body}, kind)

    def open(self) -> bytes:
        skeleton = {
            "id": f"resp_{self.base}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "in_progress",
            "model": self.model or str(self.request.get("model") or ""),
            "output": [],
            "usage": None,
        }
        return self.emit("response.created", {"response": skeleton}) + self.emit(
            "response.in_progress", {"response": skeleton}
        )

    def _close(self) -> bytes:
        if self.open_item == "reasoning":
            item = reasoning_item(self.base, self.reasoning_buffer)
            self.open_item = ""
            return self.emit(
                "response.output_item.done", {"output_index": self.index, "item": item}
            )
        return b""

    def reasoning(self, piece: str) -> bytes:
        out = b""
        if self.open_item != "reasoning":
            out += self._close()
            self.index += 1
            self.open_item = "reasoning"
            item = {"type": "reasoning", "id": f"rs_{self.base}", "summary": [], "content": []}
            out += self.emit(
                "response.output_item.added", {"output_index": self.index, "item": item}
            )
        self.reasoning_buffer += piece
        where = {"item_id": f"rs_{self.base}", "output_index": self.index, "content_index": 0}
        return out + self.emit("response.reasoning_text.delta", {**where, "delta": piece})

    def text(self, piece: str) -> bytes:
        out = b""
        if self.open_item != "message":
            out += self._close()
            self.index += 1
            self.open_item = "message"
            item = {**message_item(self.base, "", "in_progress"), "content": []}
            out += self.emit(
                "response.output_item.added", {"output_index": self.index, "item": item}
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            out += self.emit("response.content_part.added", {**self._where(), "part": part})
        delta = {**self._where(), "delta": piece, "logprobs": []}
        return out + self.emit("response.output_text.delta", delta)

    def _where(self) -> JSONObject:
        return {"item_id": f"msg_{self.base}", "output_index": self.index, "content_index": 0}
