"""Bringing a store written by an older safeagents up to the current schema, in place."""

from __future__ import annotations

import sqlite3

from safeagents.store._errors import NewerSchemaError
from safeagents.store._schema import ADDED_COLUMNS, SCHEMA_VERSION

__all__ = ["upgrade"]


def upgrade(db: sqlite3.Connection) -> None:
    """Add the columns an older store lacks and record the schema version (in the caller's
    write transaction, so concurrent openers upgrade once); :class:`NewerSchemaError` for a
    store written by a newer safeagents."""
    (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if int(version) > SCHEMA_VERSION:
        path = db.execute("PRAGMA database_list").fetchone()[2] or ":memory:"
        raise NewerSchemaError(path, int(version), SCHEMA_VERSION)
    for _, table, column, kind in ADDED_COLUMNS:
        present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if column not in present:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
    db.execute(
        "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (str(SCHEMA_VERSION),),
    )
