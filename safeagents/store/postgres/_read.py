"""PostgreSQL reads: each is one statement or runs in one ``REPEATABLE READ`` transaction, so
it sees one snapshot (a session with its hidden entries, its turns with their findings)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import psycopg

from safeagents.store._records import FindingRecord, LiveState, SessionRecord, TurnRecord
from safeagents.store._rows import (
    FINDING_ROW_COLUMNS,
    SESSION_COLUMNS,
    TURN_COLUMNS,
    FindingRow,
    HiddenRow,
    SessionRow,
    TurnRow,
    finding_from_row,
    hidden_from_row,
    loads,
    session_from_row,
    turn_from_row,
)
from safeagents.store._schema import ALIASES_VERSION_KEY

__all__ = [
    "Connection",
    "Cursor",
    "get_session",
    "list_sessions",
    "live_state",
    "snapshot",
    "turns",
]

Connection = psycopg.AsyncConnection[tuple[Any, ...]]
Cursor = psycopg.AsyncCursor[tuple[Any, ...]]

SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"


async def snapshot(conn: Connection) -> None:
    """Make the transaction just begun read one snapshot (its first statement)."""
    await conn.execute(SNAPSHOT)


async def _findings(conn: Connection, session_id: str) -> list[FindingRow]:
    cursor = await conn.execute(
        f"SELECT {FINDING_ROW_COLUMNS} FROM findings WHERE session_id = %s ORDER BY id",
        (session_id,),
    )
    return [FindingRow._make(row) for row in await cursor.fetchall()]


async def get_session(
    conn: Connection, session_id: str, *, with_findings: bool
) -> SessionRecord | None:
    cursor = await conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = %s", (session_id,)
    )
    found = await cursor.fetchone()
    if found is None:
        return None
    record = session_from_row(SessionRow._make(found))
    findings: tuple[FindingRecord, ...] = ()
    if with_findings:
        findings = tuple(map(finding_from_row, await _findings(conn, session_id)))
    cursor = await conn.execute("SELECT outcome FROM outcomes WHERE session_id = %s", (session_id,))
    outcome = await cursor.fetchone()
    return replace(
        record,
        outcome=None if outcome is None else dict(loads(outcome[0])),
        findings=findings,
    )


async def live_state(conn: Connection, session_id: str) -> LiveState:
    """One statement (one snapshot, no transaction), the request path's read: the aliases'
    version, and the session with its outcome and hidden entries when there is one."""
    cursor = await conn.execute(
        f"SELECT (SELECT value FROM meta WHERE key = %s), {SESSION_COLUMNS}, "
        "(SELECT outcome FROM outcomes WHERE session_id = s.id), "
        "(SELECT json_agg(json_build_array(dialect, kind, at, anchor, call_id, items) "
        "ORDER BY id)::text FROM hidden WHERE session_id = s.id) "
        "FROM (SELECT 1) AS one LEFT JOIN sessions s ON s.id = %s",
        (ALIASES_VERSION_KEY, session_id),
    )
    found = await cursor.fetchone()
    assert found is not None  # the join keeps its one row
    version, *columns, outcome, hidden = found
    aliases_version = 0 if version is None else int(version)
    if columns[0] is None:
        return LiveState.empty(aliases_version)
    session = replace(
        session_from_row(SessionRow._make(columns)),
        outcome=None if outcome is None else dict(loads(outcome)),
    )
    entries = tuple(hidden_from_row(HiddenRow._make(row)) for row in loads(hidden) or [])
    return LiveState(session, entries, aliases_version)


async def list_sessions(conn: Connection, limit: int, offset: int) -> list[SessionRecord]:
    cursor = await conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions ORDER BY updated DESC, id LIMIT %s OFFSET %s",
        (limit, offset),
    )
    sessions = [session_from_row(SessionRow._make(row)) for row in await cursor.fetchall()]
    if not sessions:
        return []
    cursor = await conn.execute(
        "SELECT session_id, outcome FROM outcomes WHERE session_id = ANY(%s)",
        ([session.id for session in sessions],),
    )
    outcomes = {row[0]: dict(loads(row[1])) for row in await cursor.fetchall()}
    return [replace(session, outcome=outcomes.get(session.id)) for session in sessions]


async def turns(conn: Connection, session_id: str) -> list[TurnRecord]:
    findings: dict[int, list[FindingRecord]] = {}
    for found in await _findings(conn, session_id):
        findings.setdefault(found.turn_id, []).append(finding_from_row(found))
    cursor = await conn.execute(
        f"SELECT {TURN_COLUMNS} FROM turns WHERE session_id = %s ORDER BY seq", (session_id,)
    )
    rows = [TurnRow._make(row) for row in await cursor.fetchall()]
    return [turn_from_row(row, findings.get(row.id, ())) for row in rows]
