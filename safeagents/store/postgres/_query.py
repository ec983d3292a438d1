"""PostgreSQL statements behind :class:`~safeagents.store.SessionQuery` (the console's list),
ordered and counted as the SQLite backend does."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from safeagents.store._query import (
    RuleCount,
    ServedModel,
    SessionQuery,
    SessionTotals,
    where_clause,
)
from safeagents.store._records import FindingRecord, SessionRecord
from safeagents.store._rows import (
    FINDING_ROW_COLUMNS,
    SESSION_COLUMNS,
    FindingRow,
    SessionRow,
    finding_from_row,
    loads,
    session_from_row,
)
from safeagents.store.postgres._read import Connection

__all__ = ["query_sessions", "rule_counts", "served_models", "session_totals"]

_PAGE_ORDER = (  # SQLite's order (its NULLs sort first, so last when descending)
    "updated DESC, hacked DESC, harness DESC, success DESC NULLS LAST, tool_calls DESC, "
    "blocked_calls DESC, reasks DESC, id DESC"
)


def _where(query: SessionQuery) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (possibly empty) over ``sessions`` and its parameters."""
    # starts_with: right whatever the database's collation
    return where_clause(query, "%s", lambda prefix: ("starts_with(id, %s)", [prefix]))


async def query_sessions(
    conn: Connection, query: SessionQuery, limit: int, offset: int
) -> list[SessionRecord]:
    """A page of matching sessions, most recently updated first, with findings and outcome."""
    where, params = _where(query)
    cursor = await conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions{where} ORDER BY {_PAGE_ORDER} LIMIT %s OFFSET %s",
        [*params, limit, offset],
    )
    sessions = [session_from_row(SessionRow._make(row)) for row in await cursor.fetchall()]
    if not sessions:
        return []
    ids = [session.id for session in sessions]
    cursor = await conn.execute(
        "SELECT session_id, outcome FROM outcomes WHERE session_id = ANY(%s)", (ids,)
    )
    outcomes = {row[0]: dict(loads(row[1])) for row in await cursor.fetchall()}
    cursor = await conn.execute(
        f"SELECT session_id, {FINDING_ROW_COLUMNS} FROM findings "
        "WHERE session_id = ANY(%s) ORDER BY session_id, id",
        (ids,),
    )
    findings: dict[str, list[FindingRecord]] = {}
    for row in await cursor.fetchall():
        findings.setdefault(row[0], []).append(finding_from_row(FindingRow._make(row[1:])))
    return [
        replace(
            session,
            outcome=outcomes.get(session.id),
            findings=tuple(findings.get(session.id, ())),
        )
        for session in sessions
    ]


async def session_totals(conn: Connection, query: SessionQuery) -> SessionTotals:
    where, params = _where(query)
    cursor = await conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(tool_calls), 0), COALESCE(SUM(blocked_calls), 0), "
        f"COALESCE(SUM(reasks), 0) FROM sessions{where}",
        params,
    )
    row = await cursor.fetchone()
    assert row is not None  # an aggregate has its one row
    return SessionTotals(*(int(value) for value in row))


async def rule_counts(conn: Connection) -> dict[str, RuleCount]:
    cursor = await conn.execute(
        "SELECT rule_id, COUNT(*), SUM(blocked), COUNT(DISTINCT session_id) FROM findings "
        "GROUP BY rule_id"
    )
    return {
        rule: RuleCount(rule, int(found), int(blocked or 0), int(sessions))
        for rule, found, blocked, sessions in await cursor.fetchall()
    }


async def served_models(conn: Connection, recent: int) -> list[ServedModel]:
    """The models of the last ``recent`` turns, the most recently first serving first."""
    cursor = await conn.execute(
        "SELECT model, MIN(started), MAX(ended), COUNT(*) FROM turns "
        "WHERE id > (SELECT COALESCE(MAX(id), 0) FROM turns) - %s "
        "GROUP BY model ORDER BY MIN(started) DESC",
        (recent,),
    )
    return [
        ServedModel(str(m), float(a), float(b), int(n)) for m, a, b, n in await cursor.fetchall()
    ]
