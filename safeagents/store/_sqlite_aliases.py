"""SQLite statements for the harness -> model aliases (``model_aliases``) and their version.

Every change bumps the ``aliases_version`` row of ``meta`` in its own transaction, so a
process that read the version with a session (``live_state``) knows whether its copy of the
aliases is current without reading them.
"""

from __future__ import annotations

import sqlite3
import time

from safeagents.store._sqlite_read import ALIASES_VERSION_KEY, transaction

__all__ = ["aliases", "delete_alias", "set_alias"]


def aliases(db: sqlite3.Connection) -> dict[str, str]:
    rows = db.execute("SELECT harness, model FROM model_aliases ORDER BY harness").fetchall()
    return {str(harness): str(model) for harness, model in rows}


def set_alias(db: sqlite3.Connection, harness: str, model: str) -> None:
    with transaction(db):
        db.execute(
            "INSERT INTO model_aliases (harness, model, updated) VALUES (?, ?, ?) "
            "ON CONFLICT (harness) DO UPDATE SET model = excluded.model, "
            "updated = excluded.updated",
            (harness, model, time.time()),
        )
        _bump(db)


def delete_alias(db: sqlite3.Connection, harness: str) -> bool:
    with transaction(db):
        cursor = db.execute("DELETE FROM model_aliases WHERE harness = ?", (harness,))
        if cursor.rowcount > 0:
            _bump(db)
    return cursor.rowcount > 0


def _bump(db: sqlite3.Connection) -> None:
    db.execute(
        "INSERT INTO meta (key, value) VALUES (?, '1') "
        "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (ALIASES_VERSION_KEY,),
    )
