"""What every wire dialect provides, and the SSE/token helpers they share."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from safeagents.scripted._render import OfferedTool, RenderedCall, Turn

__all__ = [
    "Dialect",
    "arguments_json",
    "content_text",
    "estimate_tokens",
    "fragments",
    "parse_sse",
    "sse",
]

Body = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Dialect:
    """One API shape: how to read a request's tools and results, and how to answer it."""

    name: str
    offered_tools: Callable[[Body], list[OfferedTool]]
    tool_outputs: Callable[[Body], list[str]]
    reply_json: Callable[[Turn, Body], dict[str, Any]]
    reply_events: Callable[[Turn, Body], Iterator[str]]

    def tool_results(self, body: Body) -> int:
        """How many tool results the request's conversation holds."""
        return len(self.tool_outputs(body))


def sse(data: Mapping[str, Any] | str, event: str | None = None) -> str:
    """One server-sent event; ``data`` objects are compact JSON like the real APIs send."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {payload}\n\n"


def fragments(text: str, parts: int = 3) -> list[str]:
    """Split ``text`` into up to ``parts`` non-empty consecutive pieces (streamed deltas)."""
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[start : start + size] for start in range(0, len(text), size)]


def estimate_tokens(value: Any) -> int:
    """A rough token count (4 characters per token) for usage fields."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return max(1, len(text) // 4)


def arguments_json(call: RenderedCall) -> str:
    """A call's arguments as the JSON string function-calling APIs carry."""
    arguments: Mapping[str, Any] = (
        call.arguments if call.arguments is not None else {"input": call.input or ""}
    )
    return json.dumps(arguments, ensure_ascii=False)


def output_tokens(turn: Turn) -> int:
    parts: list[Any] = [turn.text or ""]
    parts.extend(call.arguments if call.input is None else call.input for call in turn.calls)
    return estimate_tokens(parts)


def schema_tools(tools: Any, name_key: str, schema_key: str) -> list[OfferedTool]:
    """Function tools given as ``[{name_key: ..., schema_key: {...}}]``."""
    offered: list[OfferedTool] = []
    for tool in tools if isinstance(tools, Sequence) else ():
        if isinstance(tool, Mapping) and isinstance(tool.get(name_key), str):
            schema = tool.get(schema_key)
            offered.append(
                OfferedTool(
                    tool[name_key], "function", schema if isinstance(schema, Mapping) else {}
                )
            )
    return offered


def content_text(content: Any) -> str:
    """The text of a message or tool-result content: a string or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
            for part in content
        )
    return "" if content is None else json.dumps(content)


def parse_sse(text: str) -> list[tuple[str | None, str]]:
    """Split an SSE stream into ``(event name or None, data)`` pairs, in order."""
    events: list[tuple[str | None, str]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            events.append((name, "\n".join(data)))
    return events
