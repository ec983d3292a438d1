"""Transcripts in OpenAI chat shape, whatever dialect a session spoke (for ``sessions export``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from safeagents.protocols import CHAT, Dialect, dialect_named
from safeagents.store._records import FindingRecord, SessionRecord, TurnRecord

__all__ = ["export_line", "to_chat_messages"]

JSONObject = dict[str, Any]


def _dialect(name: str) -> Dialect:
    # the proxy records turns of its three dialects only; anything else reads as chat
    return dialect_named(name) or CHAT


def to_chat_messages(dialect: str, body: Mapping[str, Any]) -> list[JSONObject]:
    """The conversation of a request ``body`` of ``dialect`` as OpenAI chat messages."""
    return _dialect(dialect).transcript_messages(body)


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
        dialect = _dialect(last.dialect)
        messages = dialect.transcript_messages(last.request or {})
        answer = dialect.response_messages(last.response or {})
        messages.extend(answer)
        messages.extend(
            {"role": "tool", "tool_call_id": f.tool_call_id, "content": f.message}
            for f in _first_per_call(last.findings)
        )
        if last.delivered is not None and any(m.get("tool_calls") for m in answer):
            final = dialect.response_messages(last.delivered)
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
