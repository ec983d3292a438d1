"""SQLite reads (one snapshot per call) and the helpers the writer shares."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, NamedTuple, TypeVar

from safeagents.store._records import (
    FindingRecord,
    HiddenEntry,
    HiddenKind,
    LiveState,
    SessionRecord,
    TokenRecord,
    TurnKind,
    TurnRecord,
    TurnStatus,
)

__all__ = [
    "ALIASES_VERSION_KEY",
    "FINDING_COLUMNS",
    "SAME_AS_RESPONSE",
    "aliases_version",
    "delivered_text",
    "dumps",
    "get_session",
    "list_sessions",
    "live_state",
    "loads",
    "reading",
    "session_findings",
    "session_records",
    "transaction",
    "turns",
]

_T = TypeVar("_T")


class _SessionRow(NamedTuple):
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


class _FindingRow(NamedTuple):
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


class _TurnRow(NamedTuple):
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


class _HiddenRow(NamedTuple):
    dialect: str
    kind: HiddenKind
    at: int
    anchor: str
    call_id: str
    items: str


_SESSION_COLUMNS = ", ".join(_SessionRow._fields)
_FINDING_ROW_COLUMNS = ", ".join(_FindingRow._fields)
_TURN_COLUMNS = ", ".join(_TurnRow._fields)
_HIDDEN_COLUMNS = ", ".join(_HiddenRow._fields)
FINDING_COLUMNS = ", ".join(_FindingRow._fields[1:])
"""The columns that hold a :class:`FindingRecord` (what the writer inserts)."""


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


class transaction:
    """``BEGIN IMMEDIATE`` (a write) or ``BEGIN`` (a consistent read) … ``COMMIT``."""

    def __init__(self, db: sqlite3.Connection, *, write: bool = True) -> None:
        self.db = db
        self.write = write

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE" if self.write else "BEGIN")
        return self.db

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")


def reading(function: Callable[[sqlite3.Connection], _T]) -> Callable[[sqlite3.Connection], _T]:
    """``function`` run inside one read transaction, so it sees one snapshot."""

    def run(db: sqlite3.Connection) -> _T:
        with transaction(db, write=False):
            return function(db)

    return run


def _session_from_row(row: _SessionRow) -> SessionRecord:
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


def _finding_from_row(row: _FindingRow) -> FindingRecord:
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


def _findings(db: sqlite3.Connection, session_id: str) -> Iterator[_FindingRow]:
    rows = db.execute(
        f"SELECT {_FINDING_ROW_COLUMNS} FROM findings WHERE session_id = ? ORDER BY id",
        (session_id,),
    )
    return map(_FindingRow._make, rows)


def _outcome(db: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    row = db.execute("SELECT outcome FROM outcomes WHERE session_id = ?", (session_id,)).fetchone()
    return None if row is None else dict(loads(row[0]))


def get_session(
    db: sqlite3.Connection, session_id: str, *, with_findings: bool
) -> SessionRecord | None:
    found = db.execute(
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if found is None:
        return None
    record = _session_from_row(_SessionRow._make(found))
    findings: tuple[FindingRecord, ...] = ()
    if with_findings:
        findings = tuple(map(_finding_from_row, _findings(db, session_id)))
    return replace(record, outcome=_outcome(db, session_id), findings=findings)


ALIASES_VERSION_KEY = "aliases_version"
"""The ``meta`` row counting the changes ever made to the model aliases (absent: none)."""


def aliases_version(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (ALIASES_VERSION_KEY,)).fetchone()
    return 0 if row is None else int(row[0])


def live_state(db: sqlite3.Connection, session_id: str) -> LiveState:
    version = aliases_version(db)
    session = get_session(db, session_id, with_findings=False)
    if session is None:
        return LiveState.empty(version)
    rows = db.execute(
        f"SELECT {_HIDDEN_COLUMNS} FROM hidden WHERE session_id = ? ORDER BY id",
        (session_id,),
    )
    hidden = tuple(
        HiddenEntry(
            dialect=row.dialect,
            kind=row.kind,
            at=row.at,
            anchor=row.anchor,
            call_id=row.call_id,
            items=tuple(loads(row.items)),
        )
        for row in map(_HiddenRow._make, rows)
    )
    return LiveState(session, hidden, version)


def session_records(
    db: sqlite3.Connection, tail: str, params: Sequence[Any]
) -> list[SessionRecord]:
    """``SELECT … FROM sessions{tail}`` as records (without outcome or findings)."""
    rows = db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions{tail}", params).fetchall()
    return [_session_from_row(_SessionRow._make(row)) for row in rows]


def session_findings(
    db: sqlite3.Connection, session_ids: Sequence[str]
) -> Iterator[tuple[str, FindingRecord]]:
    """The findings of ``session_ids``, in insertion order per session."""
    marks = ", ".join("?" * len(session_ids))
    rows = db.execute(
        f"SELECT session_id, {_FINDING_ROW_COLUMNS} FROM findings "
        f"WHERE session_id IN ({marks}) ORDER BY session_id, id",
        list(session_ids),
    )
    for row in rows:
        yield row[0], _finding_from_row(_FindingRow._make(row[1:]))


def list_sessions(db: sqlite3.Connection, limit: int, offset: int) -> list[SessionRecord]:
    sessions = session_records(db, " ORDER BY updated DESC, id LIMIT ? OFFSET ?", (limit, offset))
    outcomes = {
        session_id: dict(loads(outcome))
        for session_id, outcome in db.execute("SELECT session_id, outcome FROM outcomes")
    }
    return [replace(session, outcome=outcomes.get(session.id)) for session in sessions]


def turns(db: sqlite3.Connection, session_id: str) -> list[TurnRecord]:
    findings: dict[int, list[FindingRecord]] = {}
    for found in _findings(db, session_id):
        findings.setdefault(found.turn_id, []).append(_finding_from_row(found))
    rows = db.execute(
        f"SELECT {_TURN_COLUMNS} FROM turns WHERE session_id = ? ORDER BY seq",
        (session_id,),
    )
    turns: list[TurnRecord] = []
    for row in map(_TurnRow._make, rows):
        delivered = row.response if row.delivered == SAME_AS_RESPONSE else row.delivered
        tokens = loads(row.tokens)
        turns.append(
            TurnRecord(
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
                findings=tuple(findings.get(row.id, ())),
                usage=loads(row.usage),
                tokens=TokenRecord.from_json(tokens) if tokens is not None else None,
                error=row.error,
                started=row.started,
                ended=row.ended,
                seq=row.seq,
                requested_model=row.requested_model,
            )
        )
    return turns
