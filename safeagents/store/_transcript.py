"""Transcripts in OpenAI chat shape, whatever dialect a session spoke (for ``sessions export``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from safeagents.store._records import FindingRecord, SessionRecord, TurnRecord

__all__ = ["export_line", "response_messages", "to_chat_messages"]

JSONObject = dict[str, Any]
_CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_TEXT_TYPES = frozenset({"text", "input_text", "output_text"})


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(part.get("text") or "")
            for part in content
            if isinstance(part, Mapping) and part.get("type") in _TEXT_TYPES
        ]
        return "\n".join(part for part in parts if part)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _call(call_id: Any, name: Any, arguments: Any) -> JSONObject:
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return {
        "id": str(call_id or ""),
        "type": "function",
        "function": {"name": str(name or ""), "arguments": arguments},
    }


def _anthropic_messages(body: Mapping[str, Any]) -> list[JSONObject]:
    out: list[JSONObject] = []
    system = _text(body.get("system"))
    if system:
        out.append({"role": "system", "content": system})
    for message in body.get("messages") or ():
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        blocks = [block for block in blocks or () if isinstance(block, Mapping)]
        role = str(message.get("role") or "user")
        text = "\n".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
        if role == "assistant":
            calls = [
                _call(b.get("id"), b.get("name"), b.get("input"))
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
                out.append({**result, "content": _text(block.get("content"))})
        if text:
            out.append({"role": role, "content": text})
    return out


def _responses_items(items: Iterable[Any], instructions: Any = None) -> list[JSONObject]:
    out: list[JSONObject] = []
    if isinstance(instructions, str) and instructions:
        out.append({"role": "system", "content": instructions})
    for item in items:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            out.append(
                {"role": str(item.get("role") or "user"), "content": _text(item.get("content"))}
            )
        elif kind in _CALL_ITEMS:
            call_id = item.get("call_id") or item.get("id")
            if kind == "function_call":
                call = _call(call_id, item.get("name"), item.get("arguments"))
            elif kind == "custom_tool_call":
                call = _call(call_id, item.get("name"), str(item.get("input") or ""))
            else:
                call = _call(call_id, "local_shell", item.get("action"))
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
                    "content": _text(item.get("output")),
                }
            )
    return out


def to_chat_messages(dialect: str, body: Mapping[str, Any]) -> list[JSONObject]:
    """The conversation of a request ``body`` of ``dialect`` as OpenAI chat messages."""
    if dialect == "messages":
        return _anthropic_messages(body)
    if dialect == "responses":
        items = body.get("input")
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        return _responses_items(items or (), body.get("instructions"))
    return [dict(message) for message in body.get("messages") or () if isinstance(message, Mapping)]


def response_messages(dialect: str, response: Mapping[str, Any]) -> list[JSONObject]:
    """The assistant message(s) of a non-stream ``response`` as OpenAI chat messages."""
    if dialect == "messages":
        return _anthropic_messages({"messages": [{**response, "role": "assistant"}]})
    if dialect == "responses":
        return _responses_items(response.get("output") or ())
    choices = response.get("choices") or ()
    first = choices[0] if choices and isinstance(choices[0], Mapping) else {}
    message = first.get("message")
    return [dict(message)] if isinstance(message, Mapping) else []


def _final_exchange(turns: Sequence[TurnRecord]) -> list[TurnRecord]:
    candidates = [t for t in turns if t.status == "ok" and t.request is not None]
    main = [t for t in candidates if t.kind in ("main", "reask")]
    pool = main or candidates
    if not pool:
        return []
    exchange = pool[-1].exchange
    return [t for t in pool if t.exchange == exchange]


def _first_per_call(findings: Iterable[FindingRecord]) -> list[FindingRecord]:
    seen: dict[str, FindingRecord] = {}
    for finding in findings:
        if finding.blocked and finding.tool_call_id not in seen:
            seen[finding.tool_call_id] = finding
    return list(seen.values())


def export_line(session: SessionRecord, turns: Sequence[TurnRecord]) -> JSONObject:
    """One JSONL session for ``safeagents check``: the last main conversation, every call the
    model made in its last exchange (withheld ones with their rejections), and the score."""
    chain = _final_exchange(turns)
    messages: list[JSONObject] = []
    if chain:
        last = chain[-1]
        messages = to_chat_messages(last.dialect, last.request or {})
        answer = response_messages(last.dialect, last.response or {})
        messages.extend(answer)
        messages.extend(
            {"role": "tool", "tool_call_id": f.tool_call_id, "content": f.message}
            for f in _first_per_call(last.findings)
        )
        if last.delivered is not None and any(m.get("tool_calls") for m in answer):
            final = response_messages(last.dialect, last.delivered)
            if not any(m.get("tool_calls") for m in final):
                messages.extend(final)  # the synthetic answer that ended the run
    return {
        "id": session.id,
        "harness": session.harness,
        "cwd": session.cwd,
        "messages": messages,
        "hacked": session.hacked,
        "tool_calls": session.tool_calls,
        "findings": [finding.to_json() for finding in session.findings],
        "outcome": session.outcome,
    }
