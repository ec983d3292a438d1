"""SQLite statements for the harness -> model aliases (``model_aliases``) and their version.

Every change bumps the ``aliases_version`` row of ``meta`` in its own transaction, so a
process that read the version with a session (``live_state``) knows whether its copy of the
aliases is current without reading them. Each alias keeps its ``origin``: ``'flags'`` (a
proxy start's ``--model-alias``) or ``'admin'`` (the admin API), which decides what a start
may change (:meth:`Store.start_aliases <safeagents.store.Store.start_aliases>`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping

from safeagents.store._alias_start import ADMIN, FLAGS, plan_start
from safeagents.store._sqlite_read import ALIASES_VERSION_KEY, transaction

__all__ = ["aliases", "delete_alias", "set_alias", "start_aliases"]


def aliases(db: sqlite3.Connection) -> dict[str, str]:
    rows = db.execute("SELECT harness, model FROM model_aliases ORDER BY harness").fetchall()
    return {str(harness): str(model) for harness, model in rows}


def set_alias(db: sqlite3.Connection, harness: str, model: str) -> None:
    with transaction(db):
        _upsert(db, harness, model, ADMIN)
        _bump(db)


def start_aliases(db: sqlite3.Connection, flags: Mapping[str, str]) -> dict[str, str]:
    with transaction(db):
        rows = db.execute("SELECT harness, model, origin FROM model_aliases")
        plan = plan_start({str(h): (str(m), str(o)) for h, m, o in rows}, flags)
        for harness in plan.delete:
            db.execute("DELETE FROM model_aliases WHERE harness = ?", (harness,))
        for harness, model in plan.set.items():
            _upsert(db, harness, model, FLAGS)
        if plan.changes:
            _bump(db)
    return plan.kept


def _upsert(db: sqlite3.Connection, harness: str, model: str, origin: str) -> None:
    db.execute(
        "INSERT INTO model_aliases (harness, model, updated, origin) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (harness) DO UPDATE SET model = excluded.model, "
        "updated = excluded.updated, origin = excluded.origin",
        (harness, model, time.time(), origin),
    )


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
