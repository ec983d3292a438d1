"""SQLite backend: one file in WAL mode, one store thread per process, safe across processes."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from safeagents.store import _sqlite_aliases as alias_sql
from safeagents.store import _sqlite_query as query_sql
from safeagents.store import _sqlite_read as read
from safeagents.store._base import Store
from safeagents.store._query import RuleCount, ServedModel, SessionQuery, SessionTotals
from safeagents.store._records import (
    HiddenEntry,
    LiveState,
    SessionRecord,
    SessionUpdate,
    TurnRecord,
)
from safeagents.store._rows import (
    HIDDEN_COLUMNS,
    TURN_DATA_COLUMNS,
    escape_surrogates,
    finding_values,
    hidden_values,
    turn_values,
)
from safeagents.store._schema import SCHEMA, SCHEMA_VERSION
from safeagents.store._sqlite_upgrade import SUCCESS, upgrade
from safeagents.store._sqlite_worker import Checkpointer, StoreThread

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")
_BUSY_TIMEOUT_MS = 30_000


class SQLiteStore(Store):
    """A :class:`Store` on one SQLite file (``:memory:`` works for a single process).

    Statements run in submission order on one dedicated thread, so the event loop never
    waits on a lock; writes use ``BEGIN IMMEDIATE`` and a busy timeout, so several proxy
    worker processes can share the file. Exchanges recorded close together are committed by
    one transaction, and WAL checkpoints run on a thread of their own.

    ``record_exchange(..., inline=True)`` (the caller has nothing else to do) writes on the
    calling thread when the store thread is idle, through a connection of that thread which
    never waits for a lock (SQLite busy: the store thread does it): a thread hop costs more
    than the write. While that connection wrote last (its page cache is current and no other
    thread is busy), :meth:`live_state` reads through it too; under load both queue on the
    store thread, where reads on the calling thread would find a cold cache and contend for
    the GIL.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._shared = self.path != ":memory:"
        """Other connections (threads, processes) see the same database."""
        self._checkpointer = None
        if self._shared:
            self._checkpointer = Checkpointer(lambda: _side_connection(self.path))
        self._thread = StoreThread(lambda: _connect(self.path), self._checkpointer)
        self._direct: dict[int, sqlite3.Connection] = {}
        self._last_writer: int | None = None
        """The thread whose own connection wrote last (``None``: the store thread)."""
        self._closed = False

    async def _run(self, function: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._closed:
            raise RuntimeError("the store is closed")
        return await self._thread.submit(function)

    async def live_state(self, session_id: str) -> LiveState:
        direct = None
        if self._last_writer == threading.get_ident() and self._thread.idle:
            direct = self._direct_connection()
        if direct is not None:
            try:
                return read.reading(lambda db: read.live_state(db, session_id))(direct)
            except sqlite3.OperationalError:  # busy or locked: the store thread waits for it
                pass
        return await self._run(read.reading(lambda db: read.live_state(db, session_id)))

    async def record_exchange(
        self,
        update: SessionUpdate,
        turns: Sequence[TurnRecord],
        hidden: Sequence[HiddenEntry] = (),
        *,
        inline: bool = False,
    ) -> list[TurnRecord]:
        if self._closed:
            raise RuntimeError("the store is closed")
        rows, entries = list(turns), list(hidden)
        direct = None
        if inline and self._thread.idle and not self._restart_due():
            direct = self._direct_connection()
        if direct is not None:
            try:
                with read.transaction(direct):
                    stored = _record(direct, update, rows, entries)
            except sqlite3.OperationalError:  # busy or locked: the store thread waits for it
                pass
            else:
                self._last_writer = threading.get_ident()
                if self._checkpointer is not None:
                    self._checkpointer.wanted()
                return stored
        self._last_writer = None
        return await self._thread.submit(
            lambda db: _record(db, update, rows, entries), exchange=True
        )

    def _restart_due(self) -> bool:
        """The WAL should start over: the store thread does that after its next write."""
        return self._checkpointer is not None and self._checkpointer.restart_due

    def _direct_connection(self) -> sqlite3.Connection | None:
        """The calling thread's own connection (never waiting for a lock), once the store
        thread has created the database; ``None`` for ``:memory:`` or a closed store."""
        if not self._shared or self._closed or not self._thread.connected:
            return None
        thread = threading.get_ident()
        direct = self._direct.get(thread)
        if direct is None:
            direct = self._direct[thread] = _side_connection(self.path, writer=True)
        return direct

    async def open_session(
        self,
        session_id: str,
        *,
        cwd: str | None,
        harness: str = "",
        sampling: Mapping[str, Any] | None = None,
    ) -> SessionRecord:
        return await self._run(lambda db: _open_session(db, session_id, cwd, harness, sampling))

    async def list_sessions(self, *, limit: int = 100, offset: int = 0) -> list[SessionRecord]:
        return await self._run(read.reading(lambda db: read.list_sessions(db, limit, offset)))

    async def query_sessions(
        self, query: SessionQuery, *, limit: int = 50, offset: int = 0
    ) -> list[SessionRecord]:
        return await self._run(
            read.reading(lambda db: query_sql.sqlite_query_sessions(db, query, limit, offset))
        )

    async def session_totals(self, query: SessionQuery) -> SessionTotals:
        return await self._run(read.reading(lambda db: query_sql.sqlite_session_totals(db, query)))

    async def rule_counts(self) -> dict[str, RuleCount]:
        return await self._run(read.reading(query_sql.rule_counts))

    async def served_models(self, *, recent: int = 100_000) -> list[ServedModel]:
        return await self._run(read.reading(lambda db: query_sql.served_models(db, recent)))

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

    async def aliases(self) -> dict[str, str]:
        return await self._run(alias_sql.aliases)

    async def set_alias(self, harness: str, model: str) -> None:
        await self._run(lambda db: alias_sql.set_alias(db, harness, model))

    async def start_aliases(self, flags: Mapping[str, str]) -> dict[str, str]:
        flags = dict(flags)
        return await self._run(lambda db: alias_sql.start_aliases(db, flags))

    async def delete_alias(self, harness: str) -> bool:
        return await self._run(lambda db: alias_sql.delete_alias(db, harness))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for direct in self._direct.values():
            direct.close()
        self._direct.clear()
        await self._thread.close()


def _connect(path: str) -> sqlite3.Connection:
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    _enable_wal(db)
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA foreign_keys = ON")
    if path != ":memory:":
        db.execute("PRAGMA wal_autocheckpoint = 0")  # the Checkpointer's job, off the write path
    with read.transaction(db):
        for statement in SCHEMA:
            db.execute(statement)
        db.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )
        upgrade(db)
    return db


def _side_connection(path: str, *, writer: bool = False) -> sqlite3.Connection:
    """A connection that never waits for a lock (SQLite says busy instead), closable from any
    thread: for checkpoints, and (``writer``) for reads and writes on an event loop."""
    db = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
    if writer:
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("PRAGMA wal_autocheckpoint = 0")
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


def _write(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
    """``db.execute``; text with lone surrogates, which SQLite cannot encode, is stored with
    them escaped (:func:`escape_surrogates`) instead of failing the exchange."""
    try:
        return db.execute(sql, params)
    except UnicodeEncodeError:
        return db.execute(sql, [escape_surrogates(value) for value in params])


def _write_many(db: sqlite3.Connection, sql: str, rows: Sequence[Sequence[Any]]) -> None:
    """``db.executemany`` as :func:`_write` runs one statement."""
    try:
        db.executemany(sql, rows)
    except UnicodeEncodeError:
        db.executemany(sql, [[escape_surrogates(value) for value in row] for row in rows])


def _record(
    db: sqlite3.Connection,
    update: SessionUpdate,
    turns: list[TurnRecord],
    hidden: list[HiddenEntry],
) -> list[TurnRecord]:
    """The statements of one exchange; the store thread runs them inside a transaction."""
    now = time.time()
    _write(
        db,
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
    _write(
        db,
        "UPDATE sessions SET updated = ?, model = ?, dialect = ?, "
        "tool_calls = tool_calls + ?, turns = turns + ?, hacked = MAX(hacked, ?), "
        "stopped = MAX(stopped, ?), blocked_calls = blocked_calls + ?, reasks = reasks + ?, "
        "harness = CASE WHEN ? != 'generic' OR harness = '' THEN ? ELSE harness END, "
        "root_key = CASE WHEN root_key = '' THEN ? ELSE root_key END "  # opened before use
        "WHERE id = ?",
        (
            now,
            update.model,
            update.dialect,
            update.tool_calls,
            len(turns),
            int(update.hacked),
            int(update.stopped),
            len({f.tool_call_id for turn in turns for f in turn.findings if f.blocked}),
            sum(turn.kind == "reask" for turn in turns),
            update.harness,
            update.harness,
            update.root_key,
            update.session_id,
        ),
    )
    if update.main is not None:
        count, key = update.main
        if update.read_main is None:
            db.execute(
                "UPDATE sessions SET main_count = ?, main_key = ? WHERE id = ?",
                (count, key, update.session_id),
            )
        else:
            read_count, read_key = update.read_main
            db.execute(
                "UPDATE sessions SET main_count = ?, main_key = ? WHERE id = ? "
                "AND (main_count <= ? OR (main_count = ? AND main_key = ?))",
                (count, key, update.session_id, count, read_count, read_key),
            )
    (last,) = db.execute(
        "SELECT COALESCE(MAX(seq), 0) FROM turns WHERE session_id = ?", (update.session_id,)
    ).fetchone()
    stored: list[TurnRecord] = []
    for offset, turn in enumerate(turns, start=1):
        turn = replace(turn, seq=last + offset)
        turn_id = _insert_turn(db, turn)
        if not turn.findings:
            stored.append(turn)
            continue
        _write_many(  # a revealed finding the session already holds is not stored again
            db,
            f"INSERT INTO findings (session_id, turn_id, {read.FINDING_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(turn.session_id, turn_id, *finding_values(f)) for f in turn.findings],
        )
        stored.append(turn)
    if not hidden:
        return stored
    _write_many(
        db,
        f"INSERT INTO hidden (session_id, {HIDDEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [hidden_values(update.session_id, entry) for entry in hidden],
    )
    return stored


def _insert_turn(db: sqlite3.Connection, turn: TurnRecord) -> int:
    cursor = _write(
        db,
        f"INSERT INTO turns (seq, {TURN_DATA_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (turn.seq, *turn_values(turn)),
    )
    return int(cursor.lastrowid or 0)


def _set_outcome(
    db: sqlite3.Connection, session_id: str, outcome: dict[str, Any]
) -> SessionRecord | None:
    with read.transaction(db):
        exists = db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if exists is None:
            return None
        _write(
            db,
            "INSERT INTO outcomes (session_id, posted, outcome) VALUES (?, ?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET posted = excluded.posted, "
            "outcome = excluded.outcome",
            (session_id, time.time(), read.dumps(outcome)),
        )
        db.execute(
            f"UPDATE sessions SET success = (SELECT {SUCCESS} FROM outcomes "
            "WHERE session_id = ?) WHERE id = ?",
            (session_id, session_id),
        )
    return read.get_session(db, session_id, with_findings=True)


def _open_session(
    db: sqlite3.Connection,
    session_id: str,
    cwd: str | None,
    harness: str,
    sampling: Mapping[str, Any] | None,
) -> SessionRecord:
    now = time.time()
    settings = read.dumps(dict(sampling)) if sampling is not None else None
    with read.transaction(db):
        _write(
            db,
            "INSERT INTO sessions (id, harness, cwd, created, updated, sampling) "
            "VALUES (?, ?, COALESCE(?, '/workspace'), ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET updated = excluded.updated, "
            "cwd = CASE WHEN ? IS NULL THEN cwd ELSE excluded.cwd END, "
            "harness = CASE WHEN excluded.harness = '' THEN harness ELSE excluded.harness END, "
            "sampling = COALESCE(excluded.sampling, sampling)",
            (session_id, harness, cwd, now, now, settings, cwd),
        )
    record = read.get_session(db, session_id, with_findings=True)
    assert record is not None  # written in this transaction
    return record
