"""SQLite reads (one snapshot per call) and the helpers the writer shares."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from safeagents.store._records import FindingRecord, LiveState, SessionRecord, TurnRecord
from safeagents.store._rows import (
    FINDING_COLUMNS,
    FINDING_ROW_COLUMNS,
    HIDDEN_COLUMNS,
    SAME_AS_RESPONSE,
    SESSION_COLUMNS,
    TURN_COLUMNS,
    FindingRow,
    HiddenRow,
    SessionRow,
    TurnRow,
    delivered_text,
    dumps,
    finding_from_row,
    hidden_from_row,
    loads,
    session_from_row,
    turn_from_row,
)
from safeagents.store._schema import ALIASES_VERSION_KEY

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
    "session_page",
    "session_records",
    "transaction",
    "turns",
]

_T = TypeVar("_T")


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


def _findings(db: sqlite3.Connection, session_id: str) -> Iterator[FindingRow]:
    rows = db.execute(
        f"SELECT {FINDING_ROW_COLUMNS} FROM findings WHERE session_id = ? ORDER BY id",
        (session_id,),
    )
    return map(FindingRow._make, rows)


def _outcome(db: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    row = db.execute("SELECT outcome FROM outcomes WHERE session_id = ?", (session_id,)).fetchone()
    return None if row is None else dict(loads(row[0]))


def get_session(
    db: sqlite3.Connection, session_id: str, *, with_findings: bool
) -> SessionRecord | None:
    found = db.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if found is None:
        return None
    record = session_from_row(SessionRow._make(found))
    findings: tuple[FindingRecord, ...] = ()
    if with_findings:
        findings = tuple(map(finding_from_row, _findings(db, session_id)))
    return replace(record, outcome=_outcome(db, session_id), findings=findings)


def aliases_version(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (ALIASES_VERSION_KEY,)).fetchone()
    return 0 if row is None else int(row[0])


def live_state(db: sqlite3.Connection, session_id: str) -> LiveState:
    version = aliases_version(db)
    session = get_session(db, session_id, with_findings=False)
    if session is None:
        return LiveState.empty(version)
    rows = db.execute(
        f"SELECT {HIDDEN_COLUMNS} FROM hidden WHERE session_id = ? ORDER BY id",
        (session_id,),
    )
    hidden = tuple(map(hidden_from_row, map(HiddenRow._make, rows)))
    return LiveState(session, hidden, version)


def session_records(
    db: sqlite3.Connection, tail: str, params: Sequence[Any]
) -> list[SessionRecord]:
    """``SELECT … FROM sessions{tail}`` as records (without outcome or findings)."""
    rows = db.execute(f"SELECT {SESSION_COLUMNS} FROM sessions{tail}", params).fetchall()
    return [session_from_row(SessionRow._make(row)) for row in rows]


def session_findings(
    db: sqlite3.Connection, session_ids: Sequence[str]
) -> Iterator[tuple[str, FindingRecord]]:
    """The findings of ``session_ids``, in insertion order per session."""
    marks = ", ".join("?" * len(session_ids))
    rows = db.execute(
        f"SELECT session_id, {FINDING_ROW_COLUMNS} FROM findings "
        f"WHERE session_id IN ({marks}) ORDER BY session_id, id",
        list(session_ids),
    )
    for row in rows:
        yield row[0], finding_from_row(FindingRow._make(row[1:]))


def session_page(
    db: sqlite3.Connection,
    where: str,
    params: Sequence[Any],
    order: str,
    limit: int,
    offset: int,
) -> list[SessionRecord]:
    """A page of ``sessions{where}`` in ``order``, with outcomes (without findings). The
    page's rows are found first, in an index alone where one serves ``where`` and ``order``
    (a deep page steps over index entries, not whole rows); only they are read, each with
    its outcome."""
    columns = ", ".join(f"sessions.{name}" for name in SessionRow._fields)
    page = f"SELECT rowid FROM sessions{where} ORDER BY {order} LIMIT ? OFFSET ?"
    rows = db.execute(
        f"SELECT {columns}, outcomes.outcome FROM sessions "
        "LEFT JOIN outcomes ON outcomes.session_id = sessions.id "
        f"WHERE sessions.rowid IN ({page}) ORDER BY {order}",
        [*params, limit, offset],
    )
    return [
        replace(
            session_from_row(SessionRow._make(row[:-1])),
            outcome=None if row[-1] is None else dict(loads(row[-1])),
        )
        for row in rows
    ]


def list_sessions(db: sqlite3.Connection, limit: int, offset: int) -> list[SessionRecord]:
    return session_page(db, "", (), "updated DESC, id", limit, offset)


def turns(db: sqlite3.Connection, session_id: str) -> list[TurnRecord]:
    findings: dict[int, list[FindingRecord]] = {}
    for found in _findings(db, session_id):
        findings.setdefault(found.turn_id, []).append(finding_from_row(found))
    rows = db.execute(
        f"SELECT {TURN_COLUMNS} FROM turns WHERE session_id = ? ORDER BY seq",
        (session_id,),
    )
    return [turn_from_row(row, findings.get(row.id, ())) for row in map(TurnRow._make, rows)]
