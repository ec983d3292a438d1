"""Copying a SQLite store into a PostgreSQL one (``safeagents store migrate``): session by
session, each in one transaction, skipping sessions already copied whole, so that a run that
stopped half-way (or a second run after more sessions were recorded) finishes the job."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from safeagents.store._errors import StoreError
from safeagents.store._location import redacted, sqlite_path
from safeagents.store._rows import (
    FINDING_COLUMNS,
    HIDDEN_COLUMNS,
    SESSION_COLUMNS,
    TurnRow,
)
from safeagents.store._sqlite import SQLiteStore

if TYPE_CHECKING:
    from safeagents.store.postgres import Connection

__all__ = ["TABLES", "CopyError", "CopyReport", "copy_store"]

TABLES = ("sessions", "turns", "findings", "hidden", "outcomes", "model_aliases")

_TURN_DATA = ", ".join(TurnRow._fields[1:])
"""Every column of a turn but its id (the target numbers turns itself)."""
_OUTCOME_COLUMNS = "session_id, posted, outcome"
_FINGERPRINT = (
    "SELECT s.updated, "
    "(SELECT COUNT(*) FROM turns WHERE session_id = s.id), "
    "(SELECT COUNT(*) FROM findings WHERE session_id = s.id), "
    "(SELECT COUNT(*) FROM hidden WHERE session_id = s.id), "
    "(SELECT outcome FROM outcomes WHERE session_id = s.id) "
    "FROM sessions s WHERE s.id = {}"
)


class CopyError(StoreError):
    """The copy cannot start, or the target does not hold what the source holds."""


@dataclass
class CopyReport:
    sessions: int = 0
    copied: int = 0
    skipped: int = 0
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Rows per table: ``(in the source, of those sessions in the target)``."""


Progress = Callable[[int, int, str], None]
"""``(sessions done, sessions in all, the session just done)``."""


async def copy_store(source: str, target: str, progress: Progress | None = None) -> CopyReport:
    """Copy every session, turn, finding, hidden entry, outcome and alias of the SQLite store
    ``source`` into the PostgreSQL store ``target``, then compare the row counts."""
    from safeagents.store.postgres import PostgresStore, bump_aliases_version, connect

    path = Path(sqlite_path(source))
    if not path.is_file():
        raise CopyError(f"no SQLite store at {path}")
    upgraded = SQLiteStore(path)  # an older file gets today's columns first
    try:
        await upgraded.list_sessions(limit=1)
    finally:
        await upgraded.close()
    prepared = PostgresStore(target)
    try:
        await prepared.prepare()
    finally:
        await prepared.close()
    report = CopyReport()
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as src:
        ids = [str(row[0]) for row in src.execute("SELECT id FROM sessions ORDER BY created, id")]
        report.sessions = len(ids)
        async with await connect(target) as pg:
            for done, session_id in enumerate(ids, start=1):
                if await _copy_session(src, pg, session_id):
                    report.copied += 1
                else:
                    report.skipped += 1
                if progress is not None:
                    progress(done, len(ids), session_id)
            aliases = src.execute(
                "SELECT harness, model, updated, origin FROM model_aliases"
            ).fetchall()
            async with pg.transaction(), pg.cursor() as cur:
                await cur.executemany(
                    "INSERT INTO model_aliases (harness, model, updated, origin) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (harness) DO UPDATE SET "
                    "model = excluded.model, updated = excluded.updated, origin = excluded.origin",
                    aliases,
                )
                if aliases:
                    await bump_aliases_version(pg)
            report.counts = await _counts(src, pg, ids)
    wrong = {table: pair for table, pair in report.counts.items() if pair[0] != pair[1]}
    if wrong:
        shown = ", ".join(f"{table} {have} of {want}" for table, (want, have) in wrong.items())
        raise CopyError(f"{redacted(target)} does not hold what {path} holds: {shown}")
    return report


async def _copy_session(src: sqlite3.Connection, pg: Connection, session_id: str) -> bool:
    """Copy one session (replacing a partial copy); ``False`` when it was there whole."""
    from safeagents.store.postgres import SUCCESS, clean

    mine = src.execute(_FINGERPRINT.format("?"), (session_id,)).fetchone()
    async with pg.transaction():
        cursor = await pg.execute(_FINGERPRINT.format("%s") + " FOR UPDATE", (session_id,))
        theirs = await cursor.fetchone()
        if theirs is not None and tuple(theirs) == tuple(mine):
            return False
        for table in ("findings", "hidden", "outcomes", "turns"):
            await pg.execute(f"DELETE FROM {table} WHERE session_id = %s", (session_id,))
        await pg.execute("DELETE FROM sessions WHERE id = %s", (session_id,))
        await _insert(
            pg,
            "sessions",
            SESSION_COLUMNS,
            _rows(src, "sessions", SESSION_COLUMNS, "id", session_id),
        )
        turns = src.execute(
            f"SELECT id, {_TURN_DATA} FROM turns WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ).fetchall()
        new_ids: dict[int, int] = {}
        async with pg.cursor() as cur:
            if turns:
                await cur.executemany(
                    f"INSERT INTO turns ({_TURN_DATA}) VALUES ({_marks(_TURN_DATA)}) RETURNING id",
                    [clean(row[1:]) for row in turns],
                    returning=True,
                )
                position = 0
                async for result in cur.results():
                    returned = await result.fetchone()
                    assert returned is not None
                    new_ids[int(turns[position][0])] = int(returned[0])
                    position += 1
        findings = src.execute(
            f"SELECT session_id, turn_id, {FINDING_COLUMNS} FROM findings "
            "WHERE session_id = ? ORDER BY id",
            (session_id,),
        ).fetchall()
        renumbered = [(row[0], new_ids[int(row[1])], *row[2:]) for row in findings]
        await _insert(pg, "findings", f"session_id, turn_id, {FINDING_COLUMNS}", renumbered)
        columns = f"session_id, {HIDDEN_COLUMNS}"
        await _insert(
            pg, "hidden", columns, _rows(src, "hidden", columns, "session_id", session_id)
        )
        outcome = _rows(src, "outcomes", _OUTCOME_COLUMNS, "session_id", session_id)
        await _insert(pg, "outcomes", _OUTCOME_COLUMNS, outcome)
        await pg.execute(
            "UPDATE sessions SET "
            "blocked_calls = (SELECT COUNT(DISTINCT tool_call_id) FROM findings "
            "WHERE session_id = %s AND blocked = 1), "
            "reasks = (SELECT COUNT(*) FROM turns WHERE session_id = %s AND kind = 'reask'), "
            f"success = (SELECT {SUCCESS} FROM outcomes WHERE session_id = %s) WHERE id = %s",
            (session_id, session_id, session_id, session_id),
        )
    return True


def _marks(columns: str) -> str:
    return ", ".join(["%s"] * len(columns.split(",")))


def _rows(
    src: sqlite3.Connection, table: str, columns: str, key: str, session_id: str
) -> list[tuple[Any, ...]]:
    return src.execute(
        f"SELECT {columns} FROM {table} WHERE {key} = ? ORDER BY rowid", (session_id,)
    ).fetchall()


async def _insert(pg: Connection, table: str, columns: str, rows: Sequence[Sequence[Any]]) -> None:
    from safeagents.store.postgres import clean

    if not rows:
        return
    async with pg.cursor() as cur:
        await cur.executemany(
            f"INSERT INTO {table} ({columns}) VALUES ({_marks(columns)})",
            [clean(row) for row in rows],
        )


async def _counts(
    src: sqlite3.Connection, pg: Connection, ids: list[str]
) -> dict[str, tuple[int, int]]:
    counts: dict[str, tuple[int, int]] = {}
    for table in TABLES:
        (want,) = src.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
        if table == "model_aliases":
            cursor = await pg.execute(
                "SELECT COUNT(*) FROM model_aliases WHERE harness = ANY(%s)",
                ([row[0] for row in src.execute("SELECT harness FROM model_aliases")],),
            )
        else:
            key = "id" if table == "sessions" else "session_id"
            cursor = await pg.execute(f"SELECT COUNT(*) FROM {table} WHERE {key} = ANY(%s)", (ids,))
        have = await cursor.fetchone()
        assert have is not None
        counts[table] = (int(want), int(have[0]))
    return counts
