"""Opening a store from what the command line, a config file or ``$SAFEAGENTS_STORE`` names:
a SQLite file (``PATH``, ``sqlite:PATH``) or a PostgreSQL database (``postgresql://…``)."""

from __future__ import annotations

import os
from pathlib import Path

from safeagents.store._base import Store
from safeagents.store._location import is_postgres, redacted, sqlite_path
from safeagents.store._sqlite import SQLiteStore

__all__ = [
    "DEFAULT_STORE",
    "STORE_VARIABLE",
    "check_store",
    "default_store",
    "is_postgres",
    "open_store",
    "redacted",
    "sqlite_path",
]

STORE_VARIABLE = "SAFEAGENTS_STORE"
DEFAULT_STORE = "safeagents.db"


def default_store() -> str:
    """``$SAFEAGENTS_STORE`` when set, else ``safeagents.db``."""
    return os.environ.get(STORE_VARIABLE) or DEFAULT_STORE


def open_store(location: str | Path) -> Store:
    """The store at ``location``; nothing is connected or created before its first use."""
    if not is_postgres(location):
        return SQLiteStore(sqlite_path(location))
    try:
        from safeagents.store.postgres import PostgresStore
    except ImportError as error:  # the extra is not installed
        raise RuntimeError(
            "a PostgreSQL store needs psycopg: pip install 'safeagents[postgres]'"
        ) from error
    return PostgresStore(str(location))


async def check_store(location: str | Path) -> None:
    """Open the store at ``location`` now (creating or upgrading its schema) and close it:
    :class:`~safeagents.store.StoreError` says why it cannot be used."""
    store = open_store(location)
    try:
        await store.list_sessions(limit=1)
    finally:
        await store.close()
