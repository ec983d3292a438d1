"""Bringing a store written by an older safeagents up to the current schema, in place."""

from __future__ import annotations

import sqlite3

from safeagents.store._errors import NewerSchemaError
from safeagents.store._schema import ADDED_COLUMNS, LATE_INDEXES, SCHEMA_VERSION

__all__ = ["SUCCESS", "upgrade"]

SUCCESS = "CASE WHEN json_extract(outcome, '$.success') = 1 THEN 1 ELSE 0 END"
"""``sessions.success`` from an ``outcomes.outcome``: 1 when it says ``"success": true``."""


def upgrade(db: sqlite3.Connection) -> None:
    """Add the columns an older store lacks (with their values and indexes) and record the
    schema version (in the caller's write transaction, so concurrent openers upgrade once);
    :class:`NewerSchemaError` for a store written by a newer safeagents."""
    (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if int(version) > SCHEMA_VERSION:
        path = db.execute("PRAGMA database_list").fetchone()[2] or ":memory:"
        raise NewerSchemaError(path, int(version), SCHEMA_VERSION)
    added: set[str] = set()
    for _, table, column, kind in ADDED_COLUMNS:
        present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if column not in present:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            added.add(column)
    if "success" in added:
        _count_per_session(db)
    for statement in LATE_INDEXES:
        db.execute(statement)
    db.execute(
        "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (str(SCHEMA_VERSION),),
    )


def _count_per_session(db: sqlite3.Connection) -> None:
    """Fill the counters schema 4 keeps per session (the writer maintains them from then on)
    from what the store already holds."""
    db.execute(
        "UPDATE sessions SET "
        "blocked_calls = (SELECT COUNT(DISTINCT tool_call_id) FROM findings "
        "WHERE findings.session_id = sessions.id AND blocked = 1), "
        "reasks = (SELECT COUNT(*) FROM turns "
        "WHERE turns.session_id = sessions.id AND kind = 'reask'), "
        f"success = (SELECT {SUCCESS} FROM outcomes WHERE outcomes.session_id = sessions.id)"
    )
