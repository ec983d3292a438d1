"""PostgresStore: the :class:`Store` on a PostgreSQL server, shared by any number of proxy
instances (psycopg 3 and its async connection pool)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool

from safeagents.store._base import Store
from safeagents.store._errors import StoreConnectionError
from safeagents.store._location import redacted as _redacted
from safeagents.store._query import RuleCount, ServedModel, SessionQuery, SessionTotals
from safeagents.store._records import (
    HiddenEntry,
    LiveState,
    SessionRecord,
    SessionUpdate,
    TurnRecord,
)
from safeagents.store.postgres import _query as query_sql
from safeagents.store.postgres import _read as read
from safeagents.store.postgres import _write as write
from safeagents.store.postgres._schema import migrate

__all__ = ["PostgresStore", "connect"]


_T = TypeVar("_T")
_CONNECT_TIMEOUT = 10.0


class PostgresStore(Store):
    """A :class:`Store` on a PostgreSQL database (``postgresql://user@host:port/db``).

    The pool opens, and the schema is created or upgraded, on first use. Every write commits
    (``synchronous_commit`` as the server has it, on by default) before its coroutine returns,
    so a finding is durable before the answer it belongs to is sent. An alias change bumps
    the ``aliases_version`` row of ``meta`` in its transaction, and :meth:`live_state` reads
    it in the same statement as the session, so every instance's next request knows.
    """

    def __init__(self, url: str, *, max_connections: int = 16) -> None:
        self.url = url
        self._max_connections = max_connections
        self._pool: AsyncConnectionPool[read.Connection] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"PostgresStore({_redacted(self.url)!r})"

    async def _open(self) -> None:
        """Migrate on a connection of its own (an unusable server fails at once, not after
        the pool's patience), then open the pool."""
        async with await connect(self.url) as conn:
            await migrate(conn, _redacted(self.url))
        if self._pool is None:  # made on the event loop that uses it
            self._pool = AsyncConnectionPool(
                self.url,
                min_size=1,
                max_size=self._max_connections,
                open=False,
                timeout=_CONNECT_TIMEOUT,
                kwargs={"connect_timeout": int(_CONNECT_TIMEOUT), "autocommit": True},
            )
            await self._pool.open()

    async def prepare(self) -> None:
        """Connect and create or upgrade the schema now rather than on first use."""
        async with self._connection():
            pass

    async def _opened(self) -> None:
        """Open the pool and migrate once; after a failure, the next call tries again."""
        self._on_its_loop()
        if self._ready is None or _failed(self._ready):
            self._ready = asyncio.ensure_future(self._open())
        await asyncio.shield(self._ready)

    def _on_its_loop(self) -> None:
        """The pool's connections and tasks belong to the event loop that first used the
        store: on another one they would half work, then fail on close. Say so at once."""
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif loop is not self._loop:
            raise RuntimeError(
                f"{self!r} serves the event loop it was first used on; "
                "open a store for each event loop"
            )

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[read.Connection]:
        if self._closed:
            raise RuntimeError("the store is closed")
        await self._opened()
        assert self._pool is not None
        try:
            async with self._pool.connection() as conn:
                yield conn
        except psycopg.OperationalError as error:
            raise StoreConnectionError(f"the store {_redacted(self.url)}: {error}") from error

    async def _write(self, statements: Callable[[read.Connection], Awaitable[_T]]) -> _T:
        async with self._connection() as conn, conn.transaction():
            return await statements(conn)

    async def _read(self, statements: Callable[[read.Connection], Awaitable[_T]]) -> _T:
        async with self._connection() as conn, conn.transaction():
            await read.snapshot(conn)
            return await statements(conn)

    async def live_state(self, session_id: str) -> LiveState:
        async with self._connection() as conn:
            return await read.live_state(conn, session_id)

    async def record_exchange(
        self,
        update: SessionUpdate,
        turns: Sequence[TurnRecord],
        hidden: Sequence[HiddenEntry] = (),
        *,
        inline: bool = False,
    ) -> list[TurnRecord]:
        rows = list(turns)
        async with self._connection() as conn:
            try:
                async with conn.pipeline():  # BEGIN to COMMIT: one round trip
                    await conn.execute("BEGIN")
                    numbered = await write.record(conn, update, rows, hidden)
                    await conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(psycopg.Error):  # a broken connection: the pool's
                    await conn.rollback()
                raise
            stored: list[TurnRecord] = []
            for turn, cursor in zip(rows, numbered, strict=True):
                row = await cursor.fetchone()
                assert row is not None  # what the committed insert returned
                stored.append(replace(turn, seq=int(row[0])))
        return stored

    async def open_session(
        self,
        session_id: str,
        *,
        cwd: str | None,
        harness: str = "",
        sampling: Mapping[str, Any] | None = None,
    ) -> SessionRecord:
        async def statements(conn: read.Connection) -> SessionRecord:
            await write.open_session(conn, session_id, cwd, harness, sampling)
            record = await read.get_session(conn, session_id, with_findings=True)
            assert record is not None  # written in this transaction
            return record

        return await self._write(statements)

    async def list_sessions(self, *, limit: int = 100, offset: int = 0) -> list[SessionRecord]:
        return await self._read(lambda conn: read.list_sessions(conn, limit, offset))

    async def query_sessions(
        self, query: SessionQuery, *, limit: int = 50, offset: int = 0
    ) -> list[SessionRecord]:
        return await self._read(lambda conn: query_sql.query_sessions(conn, query, limit, offset))

    async def session_totals(self, query: SessionQuery) -> SessionTotals:
        return await self._read(lambda conn: query_sql.session_totals(conn, query))

    async def rule_counts(self) -> dict[str, RuleCount]:
        return await self._read(query_sql.rule_counts)

    async def served_models(self, *, recent: int = 100_000) -> list[ServedModel]:
        return await self._read(lambda conn: query_sql.served_models(conn, recent))

    async def get_session(self, session_id: str) -> SessionRecord | None:
        return await self._read(lambda conn: read.get_session(conn, session_id, with_findings=True))

    async def turns(self, session_id: str) -> list[TurnRecord]:
        return await self._read(lambda conn: read.turns(conn, session_id))

    async def set_outcome(
        self, session_id: str, outcome: Mapping[str, Any]
    ) -> SessionRecord | None:
        async def statements(conn: read.Connection) -> SessionRecord | None:
            if not await write.set_outcome(conn, session_id, outcome):
                return None
            return await read.get_session(conn, session_id, with_findings=True)

        return await self._write(statements)

    async def aliases(self) -> dict[str, str]:
        async def statements(conn: read.Connection) -> dict[str, str]:
            cursor = await conn.execute(  # byte order, as SQLite, whatever the database's locale
                'SELECT harness, model FROM model_aliases ORDER BY harness COLLATE "C"'
            )
            return {str(harness): str(model) for harness, model in await cursor.fetchall()}

        return await self._read(statements)

    async def set_alias(self, harness: str, model: str) -> None:
        await self._write(lambda conn: write.set_alias(conn, harness, model))

    async def start_aliases(self, flags: Mapping[str, str]) -> dict[str, str]:
        flags = dict(flags)
        return await self._write(lambda conn: write.start_aliases(conn, flags))

    async def delete_alias(self, harness: str) -> bool:
        return await self._write(lambda conn: write.delete_alias(conn, harness))

    async def close(self) -> None:
        if self._closed:
            return
        if self._pool is not None:
            self._on_its_loop()
        self._closed = True
        if self._ready is not None:
            with contextlib.suppress(Exception):
                await self._ready
        if self._pool is not None:
            await self._pool.close()


async def connect(url: str) -> read.Connection:
    """One connection to the store at ``url``; :class:`StoreConnectionError` (password left
    out) when the URL does not parse (psycopg's ``ProgrammingError``) or the server cannot be
    reached or refuses it."""
    try:
        return await psycopg.AsyncConnection.connect(url, connect_timeout=int(_CONNECT_TIMEOUT))
    except (psycopg.OperationalError, psycopg.ProgrammingError) as error:
        raise StoreConnectionError(
            f"cannot use the store {_redacted(url)}: {error}".strip()
        ) from error


def _failed(future: asyncio.Future[None]) -> bool:
    return future.done() and (future.cancelled() or future.exception() is not None)
