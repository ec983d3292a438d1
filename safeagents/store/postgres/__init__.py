"""The PostgreSQL backend of the store (``--store postgresql://user@host/db``): many proxy
instances on one database, the request path's read in one statement, and
``safeagents store migrate`` to move a SQLite store over. Needs the ``postgres`` extra
(psycopg 3)."""

from __future__ import annotations

from safeagents.store.postgres._read import Connection
from safeagents.store.postgres._schema import SUCCESS
from safeagents.store.postgres._store import PostgresStore, connect
from safeagents.store.postgres._write import bump_aliases_version, clean

__all__ = [
    "SUCCESS",
    "Connection",
    "PostgresStore",
    "bump_aliases_version",
    "clean",
    "connect",
]
