"""SQLite statements behind :class:`~safeagents.store.SessionQuery` (the console's list).

The three ``sqlite_`` functions are public (exported by :mod:`safeagents.store`): the same
statements :class:`~safeagents.store.SQLiteStore` runs, on a connection of one's own (a copy
of a store, a benchmark's baseline)."""

from __future__ import annotations

import sqlite3
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
from safeagents.store._sqlite_read import session_findings, session_page

__all__ = [
    "rule_counts",
    "served_models",
    "sqlite_query_sessions",
    "sqlite_session_totals",
    "sqlite_where",
]

_PREFIX_END = "\U0010ffff"
_PAGE_ORDER = (  # sessions_for_console backwards: no sort, whatever the page
    "updated DESC, hacked DESC, harness DESC, success DESC, tool_calls DESC, blocked_calls DESC, "
    "reasks DESC, id DESC"
)


def sqlite_where(query: SessionQuery) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (possibly empty) over ``sessions`` that ``query`` makes, and its
    parameters."""
    return where_clause(
        query, "?", lambda prefix: ("id >= ? AND id < ?", [prefix, prefix + _PREFIX_END])
    )


def sqlite_query_sessions(
    db: sqlite3.Connection, query: SessionQuery, limit: int, offset: int
) -> list[SessionRecord]:
    """A page of matching sessions, most recently updated first, with findings and outcome."""
    where, params = sqlite_where(query)
    sessions = session_page(db, where, params, _PAGE_ORDER, limit, offset)
    if not sessions:
        return []
    ids = [session.id for session in sessions]
    findings: dict[str, list[FindingRecord]] = {}
    for session_id, finding in session_findings(db, ids):
        findings.setdefault(session_id, []).append(finding)
    return [replace(session, findings=tuple(findings.get(session.id, ()))) for session in sessions]


def sqlite_session_totals(db: sqlite3.Connection, query: SessionQuery) -> SessionTotals:
    """Sessions, tool calls, blocked calls and re-asks over what ``query`` matches."""
    where, params = sqlite_where(query)
    row = db.execute(
        "SELECT COUNT(*), COALESCE(SUM(tool_calls), 0), COALESCE(SUM(blocked_calls), 0), "
        f"COALESCE(SUM(reasks), 0) FROM sessions{where}",
        params,
    ).fetchone()
    return SessionTotals(*(int(value) for value in row))


def rule_counts(db: sqlite3.Connection) -> dict[str, RuleCount]:
    rows = db.execute(
        "SELECT rule_id, COUNT(*), SUM(blocked), COUNT(DISTINCT session_id) FROM findings "
        "GROUP BY rule_id"
    )
    return {
        rule: RuleCount(rule, int(found), int(blocked or 0), int(sessions))
        for rule, found, blocked, sessions in rows
    }


def served_models(db: sqlite3.Connection, recent: int) -> list[ServedModel]:
    """The models of the last ``recent`` turns, the most recently first serving first."""
    rows = db.execute(
        "SELECT model, MIN(started), MAX(ended), COUNT(*) FROM turns "
        "WHERE id > (SELECT COALESCE(MAX(id), 0) FROM turns) - ? "
        "GROUP BY model ORDER BY MIN(started) DESC",
        (recent,),
    )
    return [ServedModel(str(m), float(a), float(b), int(n)) for m, a, b, n in rows]
