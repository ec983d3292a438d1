"""SQLite backend: one file in WAL mode, one worker thread per process, safe across processes."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from safeagents.store import _sqlite_read as read
from safeagents.store._base import Store
from safeagents.store._records import (
    HiddenEntry,
    LiveState,
    SessionRecord,
    SessionUpdate,
    TurnRecord,
)
from safeagents.store._schema import SCHEMA, SCHEMA_VERSION

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")
_BUSY_TIMEOUT_MS = 30_000


class SQLiteStore(Store):
    """A :class:`Store` on one SQLite file (``:memory:`` works for a single process).

    All statements run on one dedicated thread, so the event loop never waits on SQLite;
    writes use ``BEGIN IMMEDIATE`` and a busy timeout, so several proxy worker processes
    can share the file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="safeagents-store")
        self._connection: sqlite3.Connection | None = None
        self._closed = False

    async def _run(self, function: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._closed:
            raise RuntimeError("the store is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._call, function)

    def _call(self, function: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._connection is None:
            self._connection = _connect(self.path)
        return function(self._connection)

    async def live_state(self, session_id: str) -> LiveState:
        return await self._run(read.reading(lambda db: read.live_state(db, session_id)))

    async def record_exchange(
        self,
        update: SessionUpdate,
        turns: Sequence[TurnRecord],
        hidden: Sequence[HiddenEntry] = (),
    ) -> list[TurnRecord]:
        return await self._run(lambda db: _record(db, update, list(turns), list(hidden)))

    async def list_sessions(self, *, limit: int = 100, offset: int = 0) -> list[SessionRecord]:
        return await self._run(read.reading(lambda db: read.list_sessions(db, limit, offset)))

    async def get_session(self, session_id: str) -> SessionRecord | None:
        return await self._run(
            read.reading(lambda db: read.get_session(db, session_id, with_findings=True))
        )

    async def turns(self, session_id: str) -> list[TurnRecord]:
        return await self._run(read.reading(lambda db: read.turns(db, session_id)))

    async def set_outcome(
        self, session_id: str, outcome: Mapping[str, Any]
    ) -> SessionRecord | None:
        return await self._run(lambda db: _set_outcome(db, session_id, dict(outcome)))

    async def close(self) -> None:
        if self._closed:
            return
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._disconnect)
        self._closed = True
        self._executor.shutdown(wait=True)

    def _disconnect(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _connect(path: str) -> sqlite3.Connection:
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    _enable_wal(db)
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA foreign_keys = ON")
    with read.transaction(db):
        for statement in SCHEMA:
            db.execute(statement)
        db.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )
    return db


def _enable_wal(db: sqlite3.Connection, attempts: int = 50) -> None:
    """Switch to WAL; a second process opening a brand-new file can briefly see it locked."""
    for attempt in range(attempts):
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.02 * (attempt + 1))


def _record(
    db: sqlite3.Connection,
    update: SessionUpdate,
    turns: list[TurnRecord],
    hidden: list[HiddenEntry],
) -> list[TurnRecord]:
    now = time.time()
    with read.transaction(db):
        db.execute(
            "INSERT OR IGNORE INTO sessions (id, harness, dialect, cwd, model, created, updated, "
            "root_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                update.session_id,
                update.harness,
                update.dialect,
                update.cwd,
                update.model,
                now,
                now,
                update.root_key,
            ),
        )
        db.execute(
            "UPDATE sessions SET updated = ?, model = ?, dialect = ?, "
            "tool_calls = tool_calls + ?, turns = turns + ?, hacked = MAX(hacked, ?), "
            "stopped = MAX(stopped, ?), "
            "harness = CASE WHEN ? != 'generic' OR harness = '' THEN ? ELSE harness END "
            "WHERE id = ?",
            (
                now,
                update.model,
                update.dialect,
                update.tool_calls,
                len(turns),
                int(update.hacked),
                int(update.stopped),
                update.harness,
                update.harness,
                update.session_id,
            ),
        )
        if update.main is not None:
            db.execute(
                "UPDATE sessions SET main_count = ?, main_key = ? WHERE id = ?",
                (update.main[0], update.main[1], update.session_id),
            )
        (last,) = db.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM turns WHERE session_id = ?", (update.session_id,)
        ).fetchone()
        stored: list[TurnRecord] = []
        for offset, turn in enumerate(turns, start=1):
            turn = replace(turn, seq=last + offset)
            turn_id = _insert_turn(db, turn)
            db.executemany(
                f"INSERT INTO findings (session_id, turn_id, {read.FINDING_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        turn.session_id,
                        turn_id,
                        f.rule_id,
                        f.category,
                        f.severity,
                        f.action,
                        f.tool_call_id,
                        f.tool,
                        f.summary,
                        f.message,
                        int(f.blocked),
                    )
                    for f in turn.findings
                ],
            )
            stored.append(turn)
        db.executemany(
            "INSERT INTO hidden (session_id, dialect, kind, at, anchor, call_id, items) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    update.session_id,
                    entry.dialect,
                    entry.kind,
                    entry.at,
                    entry.anchor,
                    entry.call_id,
                    read.dumps(list(entry.items)),
                )
                for entry in hidden
            ],
        )
    return stored


def _insert_turn(db: sqlite3.Connection, turn: TurnRecord) -> int:
    cursor = db.execute(
        "INSERT INTO turns (session_id, seq, exchange, attempt, kind, status, dialect, harness, "
        "model, stream, request, response, delivered, usage, tokens, error, started, ended) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            turn.session_id,
            turn.seq,
            turn.exchange,
            turn.attempt,
            turn.kind,
            turn.status,
            turn.dialect,
            turn.harness,
            turn.model,
            int(turn.stream),
            read.dumps(turn.request),
            read.dumps(turn.response),
            read.dumps(turn.delivered),
            read.dumps(turn.usage),
            read.dumps(turn.tokens.to_json() if turn.tokens is not None else None),
            turn.error,
            turn.started,
            turn.ended,
        ),
    )
    return int(cursor.lastrowid or 0)


def _set_outcome(
    db: sqlite3.Connection, session_id: str, outcome: dict[str, Any]
) -> SessionRecord | None:
    with read.transaction(db):
        exists = db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if exists is None:
            return None
        db.execute(
            "INSERT INTO outcomes (session_id, posted, outcome) VALUES (?, ?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET posted = excluded.posted, "
            "outcome = excluded.outcome",
            (session_id, time.time(), read.dumps(outcome)),
        )
    return read.get_session(db, session_id, with_findings=True)
