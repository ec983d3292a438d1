"""SQLite statements for the harness -> model aliases (``model_aliases``)."""

from __future__ import annotations

import sqlite3
import time

from safeagents.store._sqlite_read import transaction

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


def delete_alias(db: sqlite3.Connection, harness: str) -> bool:
    with transaction(db):
        cursor = db.execute("DELETE FROM model_aliases WHERE harness = ?", (harness,))
    return cursor.rowcount > 0
