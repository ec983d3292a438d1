"""The PostgreSQL backend of the store (``--store postgresql://user@host/db``): many proxy
instances on one database, alias changes pushed with ``LISTEN``/``NOTIFY``, and
:func:`copy_store` to move a SQLite store over. Needs the ``postgres`` extra (psycopg 3)."""

from __future__ import annotations

from safeagents.store.postgres._store import PostgresStore, StoreConnectionError

__all__ = ["PostgresStore", "StoreConnectionError"]
