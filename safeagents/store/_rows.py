"""The rows of the store's tables as Python sees them, and their records: shared by every
backend (the SQL differs, the columns do not)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from safeagents.store._records import (
    FindingRecord,
    HiddenEntry,
    HiddenKind,
    SessionRecord,
    TokenRecord,
    TurnKind,
    TurnRecord,
    TurnStatus,
)

__all__ = [
    "FINDING_COLUMNS",
    "FINDING_ROW_COLUMNS",
    "HIDDEN_COLUMNS",
    "SAME_AS_RESPONSE",
    "SESSION_COLUMNS",
    "TURN_COLUMNS",
    "TURN_DATA_COLUMNS",
    "FindingRow",
    "HiddenRow",
    "SessionRow",
    "TurnRow",
    "delivered_text",
    "dumps",
    "escape_surrogates",
    "finding_from_row",
    "finding_values",
    "hidden_from_row",
    "hidden_values",
    "loads",
    "session_from_row",
    "turn_from_row",
    "turn_values",
]


class SessionRow(NamedTuple):
    id: str
    harness: str
    dialect: str
    cwd: str
    model: str
    created: float
    updated: float
    hacked: int
    tool_calls: int
    turns: int
    stopped: int
    root_key: str
    main_count: int
    main_key: str
    sampling: str | None


class FindingRow(NamedTuple):
    turn_id: int
    rule_id: str
    category: str
    severity: str
    action: str
    tool_call_id: str
    tool: str
    summary: str
    message: str
    blocked: int
    revealed: int


class TurnRow(NamedTuple):
    id: int
    session_id: str
    exchange: str
    attempt: int
    kind: TurnKind
    status: TurnStatus
    dialect: str
    harness: str
    model: str
    stream: int
    request: str | None
    response: str | None
    delivered: str | None
    usage: str | None
    tokens: str | None
    error: str | None
    started: float
    ended: float
    seq: int
    requested_model: str


class HiddenRow(NamedTuple):
    dialect: str
    kind: HiddenKind
    at: int
    anchor: str
    call_id: str
    items: str


SESSION_COLUMNS = ", ".join(SessionRow._fields)
FINDING_ROW_COLUMNS = ", ".join(FindingRow._fields)
TURN_COLUMNS = ", ".join(TurnRow._fields)
HIDDEN_COLUMNS = ", ".join(HiddenRow._fields)
FINDING_COLUMNS = ", ".join(FindingRow._fields[1:])
"""The columns that hold a :class:`FindingRecord` (what the writer inserts)."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(value: Any, *, lossy: bool = False) -> Any:
    """A string with each lone surrogate (which UTF-8, so neither database, can hold; JSON's
    ``\\ud800`` escapes decode to one) written as that escape: in the JSON text the columns
    hold, the same string once decoded. ``lossy``: replaced by U+FFFD instead, for JSON that
    PostgreSQL parses (it refuses such escapes). Other values as they are."""
    if not isinstance(value, str) or value.isascii() or _SURROGATE.search(value) is None:
        return value
    if lossy:
        return _SURROGATE.sub("\ufffd", value)
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", value)


def dumps(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


SAME_AS_RESPONSE = '"=response"'
"""What the ``delivered`` column holds when the harness got the upstream's answer unchanged
(a JSON string, so never a delivered answer, which is an object): it is stored once."""


def delivered_text(delivered: Any, response: Any) -> str | None:
    """The ``delivered`` column for an answer and the upstream ``response`` it came from."""
    if delivered is not None and (delivered is response or delivered == response):
        return SAME_AS_RESPONSE
    return dumps(delivered)


def session_from_row(row: SessionRow) -> SessionRecord:
    return SessionRecord(
        id=row.id,
        harness=row.harness,
        dialect=row.dialect,
        cwd=row.cwd,
        model=row.model,
        created=row.created,
        updated=row.updated,
        hacked=bool(row.hacked),
        tool_calls=row.tool_calls,
        turns=row.turns,
        stopped=bool(row.stopped),
        root_key=row.root_key,
        main_count=row.main_count,
        main_key=row.main_key,
        sampling=loads(row.sampling) if row.sampling else None,
    )


def finding_from_row(row: FindingRow) -> FindingRecord:
    return FindingRecord(
        rule_id=row.rule_id,
        category=row.category,
        severity=row.severity,
        action=row.action,
        tool_call_id=row.tool_call_id,
        tool=row.tool,
        summary=row.summary,
        message=row.message,
        blocked=bool(row.blocked),
        revealed=bool(row.revealed),
    )


def hidden_from_row(row: HiddenRow) -> HiddenEntry:
    return HiddenEntry(
        dialect=row.dialect,
        kind=row.kind,
        at=row.at,
        anchor=row.anchor,
        call_id=row.call_id,
        items=tuple(loads(row.items)),
    )


def turn_from_row(row: TurnRow, findings: Sequence[FindingRecord]) -> TurnRecord:
    delivered = row.response if row.delivered == SAME_AS_RESPONSE else row.delivered
    tokens = loads(row.tokens)
    return TurnRecord(
        session_id=row.session_id,
        exchange=row.exchange,
        attempt=row.attempt,
        kind=row.kind,
        status=row.status,
        dialect=row.dialect,
        harness=row.harness,
        model=row.model,
        stream=bool(row.stream),
        request=loads(row.request),
        response=loads(row.response),
        delivered=loads(delivered),
        findings=tuple(findings),
        usage=loads(row.usage),
        tokens=TokenRecord.from_json(tokens) if tokens is not None else None,
        error=row.error,
        started=row.started,
        ended=row.ended,
        seq=row.seq,
        requested_model=row.requested_model,
    )


TURN_DATA_COLUMNS = (
    "session_id, exchange, attempt, kind, status, dialect, harness, model, requested_model, "
    "stream, request, response, delivered, usage, tokens, error, started, ended"
)
"""The columns of a turn that :func:`turn_values` fills (all but ``id`` and ``seq``)."""


def turn_values(turn: TurnRecord) -> tuple[Any, ...]:
    return (
        turn.session_id,
        turn.exchange,
        turn.attempt,
        turn.kind,
        turn.status,
        turn.dialect,
        turn.harness,
        turn.model,
        turn.requested_model,
        int(turn.stream),
        turn.request_json if turn.request_json is not None else dumps(turn.request),
        dumps(turn.response),
        delivered_text(turn.delivered, turn.response),
        dumps(turn.usage),
        dumps(turn.tokens.to_json() if turn.tokens is not None else None),
        turn.error,
        turn.started,
        turn.ended,
    )


def finding_values(finding: FindingRecord) -> tuple[Any, ...]:
    """The :data:`FINDING_COLUMNS` of ``finding``."""
    return (
        finding.rule_id,
        finding.category,
        finding.severity,
        finding.action,
        finding.tool_call_id,
        finding.tool,
        finding.summary,
        finding.message,
        int(finding.blocked),
        int(finding.revealed),
    )


def hidden_values(session_id: str, entry: HiddenEntry) -> tuple[Any, ...]:
    """``session_id`` and the :data:`HIDDEN_COLUMNS` of ``entry``."""
    return (
        session_id,
        entry.dialect,
        entry.kind,
        entry.at,
        entry.anchor,
        entry.call_id,
        dumps(list(entry.items)),
    )
