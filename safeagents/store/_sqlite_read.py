"""SQLite reads (one snapshot per call) and the helpers the writer shares."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from safeagents.store._records import (
    FindingRecord,
    HiddenEntry,
    LiveState,
    SessionRecord,
    TokenRecord,
    TurnRecord,
)

__all__ = [
    "FINDING_COLUMNS",
    "SAME_AS_RESPONSE",
    "delivered_text",
    "dumps",
    "get_session",
    "list_sessions",
    "live_state",
    "loads",
    "reading",
    "transaction",
    "turns",
]

_T = TypeVar("_T")
SESSION_COLUMNS = (
    "id, harness, dialect, cwd, model, created, updated, hacked, tool_calls, turns, stopped, "
    "root_key, main_count, main_key"
)
FINDING_COLUMNS = (
    "rule_id, category, severity, action, tool_call_id, tool, summary, message, blocked"
)


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


def _session_from_row(row: Sequence[Any]) -> SessionRecord:
    return SessionRecord(
        id=row[0],
        harness=row[1],
        dialect=row[2],
        cwd=row[3],
        model=row[4],
        created=row[5],
        updated=row[6],
        hacked=bool(row[7]),
        tool_calls=row[8],
        turns=row[9],
        stopped=bool(row[10]),
        root_key=row[11],
        main_count=row[12],
        main_key=row[13],
    )


def _finding_from_row(row: Sequence[Any]) -> FindingRecord:
    rule_id, category, severity, action, call_id, tool, summary, message, blocked = row
    return FindingRecord(
        rule_id, category, severity, action, call_id, tool, summary, message, bool(blocked)
    )


def _outcome(db: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    row = db.execute("SELECT outcome FROM outcomes WHERE session_id = ?", (session_id,)).fetchone()
    return None if row is None else dict(loads(row[0]))


def get_session(
    db: sqlite3.Connection, session_id: str, *, with_findings: bool
) -> SessionRecord | None:
    row = db.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return None
    record = _session_from_row(row)
    findings: tuple[FindingRecord, ...] = ()
    if with_findings:
        findings = tuple(
            _finding_from_row(found)
            for found in db.execute(
                f"SELECT {FINDING_COLUMNS} FROM findings WHERE session_id = ? ORDER BY id",
                (session_id,),
            )
        )
    return replace(record, outcome=_outcome(db, session_id), findings=findings)


def live_state(db: sqlite3.Connection, session_id: str) -> LiveState:
    session = get_session(db, session_id, with_findings=False)
    if session is None:
        return LiveState.empty()
    hidden = tuple(
        HiddenEntry(
            dialect=row[0],
            kind=row[1],
            at=row[2],
            anchor=row[3],
            call_id=row[4],
            items=tuple(loads(row[5])),
        )
        for row in db.execute(
            "SELECT dialect, kind, at, anchor, call_id, items FROM hidden "
            "WHERE session_id = ? ORDER BY id",
            (session_id,),
        )
    )
    return LiveState(session, hidden)


def list_sessions(db: sqlite3.Connection, limit: int, offset: int) -> list[SessionRecord]:
    rows = db.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions ORDER BY updated DESC, id LIMIT ? OFFSET ?",
        (limit, offset),
    ).fetchall()
    outcomes = {
        row[0]: dict(loads(row[1]))
        for row in db.execute("SELECT session_id, outcome FROM outcomes")
    }
    return [replace(_session_from_row(row), outcome=outcomes.get(row[0])) for row in rows]


def turns(db: sqlite3.Connection, session_id: str) -> list[TurnRecord]:
    findings: dict[int, list[FindingRecord]] = {}
    for row in db.execute(
        f"SELECT turn_id, {FINDING_COLUMNS} FROM findings WHERE session_id = ? ORDER BY id",
        (session_id,),
    ):
        findings.setdefault(row[0], []).append(_finding_from_row(row[1:]))
    turns: list[TurnRecord] = []
    for row in db.execute(
        "SELECT id, session_id, exchange, attempt, kind, status, dialect, harness, model, "
        "stream, request, response, delivered, usage, tokens, error, started, ended, seq, "
        "requested_model "
        "FROM turns WHERE session_id = ? ORDER BY seq",
        (session_id,),
    ):
        tokens = loads(row[14])
        turns.append(
            TurnRecord(
                session_id=row[1],
                exchange=row[2],
                attempt=row[3],
                kind=row[4],
                status=row[5],
                dialect=row[6],
                harness=row[7],
                model=row[8],
                stream=bool(row[9]),
                request=loads(row[10]),
                response=loads(row[11]),
                delivered=loads(row[11] if row[12] == SAME_AS_RESPONSE else row[12]),
                findings=tuple(findings.get(row[0], ())),
                usage=loads(row[13]),
                tokens=TokenRecord.from_json(tokens) if tokens is not None else None,
                error=row[15],
                started=row[16],
                ended=row[17],
                seq=row[18],
                requested_model=row[19],
            )
        )
    return turns
