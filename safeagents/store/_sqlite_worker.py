"""The SQLite store's thread: statements in submission order, exchanges committed in groups,
and WAL checkpoints on a connection of their own so that no write waits for one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["CHECKPOINT_INTERVAL", "Checkpointer", "StoreThread"]

logger = logging.getLogger("safeagents.store")

_T = TypeVar("_T")
Statements = Callable[[sqlite3.Connection], _T]
CHECKPOINT_INTERVAL = 0.25
"""Seconds between two WAL checkpoints while the store is being written."""
RESTART_FRAMES = 10_000
"""WAL length (pages, ~40 MB) from which the store thread finishes a checkpoint itself so that
its next write starts the WAL over: that holds its writes back for a few ms (the syncs)."""
_GROUP_LIMIT = 128


@dataclass(slots=True)
class _Job:
    statements: Statements[Any] | None
    """``None``: close the connection (without opening it first)."""
    future: asyncio.Future[Any]
    exchange: bool
    """An exchange's writes: they run inside a transaction shared with their neighbours."""


@dataclass(slots=True)
class _Outcome:
    future: asyncio.Future[Any]
    value: Any
    failed: bool


class StoreThread:
    """Runs statements on one connection in one thread, in the order they were submitted.

    Consecutive exchanges (``submit(..., exchange=True)``) are committed by one transaction,
    each in a savepoint of its own, so a burst of answers costs one commit; their callers
    are woken together.
    """

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        checkpointer: Checkpointer | None = None,
    ) -> None:
        self._connect = connect
        self._checkpointer = checkpointer
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="safeagents-store")
        self._lock = threading.Lock()
        self._queue: deque[_Job] = deque()
        self._draining = False
        self._connection: sqlite3.Connection | None = None
        self.connected = False
        """The database exists with its schema (the first statement has run)."""

    def submit(self, statements: Statements[_T], *, exchange: bool = False) -> asyncio.Future[_T]:
        """Queue ``statements`` for the thread (``exchange``: writes without a transaction)."""
        return self._enqueue(statements, exchange)

    def _enqueue(self, statements: Statements[Any] | None, exchange: bool) -> asyncio.Future[Any]:
        job = _Job(statements, asyncio.get_running_loop().create_future(), exchange)
        with self._lock:
            self._queue.append(job)
            start = not self._draining
            self._draining = True
        if start:
            self._executor.submit(self._drain)
        return job.future

    @property
    def idle(self) -> bool:
        """Nothing is queued or running: everything submitted is committed."""
        return not self._draining

    async def close(self) -> None:
        """Run what is queued, close the connections and stop the threads."""
        await self._enqueue(None, False)
        await asyncio.get_running_loop().run_in_executor(None, self._shutdown)

    def _shutdown(self) -> None:
        self._executor.shutdown(wait=True)
        if self._checkpointer is not None:
            self._checkpointer.close()

    def _database(self) -> sqlite3.Connection:
        if self._connection is None:
            self._connection = self._connect()
            self.connected = True
        return self._connection

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._draining = False
                    return
                jobs = list(self._queue)
                self._queue.clear()
            while jobs:
                step = _next_step(jobs)
                del jobs[: len(step)]
                self._settle(self._run(step))

    def _run(self, step: list[_Job]) -> list[_Outcome]:
        if step[0].statements is None:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
            return [_Outcome(step[0].future, None, False)]
        try:
            db = self._database()
        except Exception as error:
            outcomes = [_Outcome(job.future, error, True) for job in step]
        else:
            if not step[0].exchange:
                outcomes = [_call(db, step[0])]
            else:
                outcomes = _commit_group(db, step)
                if self._checkpointer is not None:
                    self._checkpointer.wanted()
                    if self._checkpointer.restart_due:
                        self._checkpointer.finish(db)
        return outcomes

    def _settle(self, outcomes: list[_Outcome]) -> None:
        by_loop: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
        for outcome in outcomes:
            by_loop.setdefault(outcome.future.get_loop(), []).append(outcome)
        for loop, settled in by_loop.items():
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(_resolve, settled)


def _next_step(jobs: list[_Job]) -> list[_Job]:
    """The first job alone, or the run of consecutive exchanges it starts."""
    if not jobs[0].exchange:
        return jobs[:1]
    end = 1
    while end < len(jobs) and end < _GROUP_LIMIT and jobs[end].exchange:
        end += 1
    return jobs[:end]


def _call(db: sqlite3.Connection, job: _Job) -> _Outcome:
    assert job.statements is not None
    try:
        return _Outcome(job.future, job.statements(db), False)
    except Exception as error:
        return _Outcome(job.future, error, True)


def _commit_group(db: sqlite3.Connection, group: list[_Job]) -> list[_Outcome]:
    """One write transaction for all of ``group``; an exchange that fails is rolled back to
    its savepoint and fails alone."""
    outcomes: list[_Outcome] = []
    try:
        db.execute("BEGIN IMMEDIATE")
        for job in group:
            assert job.statements is not None
            if len(group) == 1:
                outcomes.append(_Outcome(job.future, job.statements(db), False))
                continue
            db.execute("SAVEPOINT exchange")
            try:
                outcomes.append(_Outcome(job.future, job.statements(db), False))
            except Exception as error:
                db.execute("ROLLBACK TO exchange")
                outcomes.append(_Outcome(job.future, error, True))
            db.execute("RELEASE exchange")
        db.execute("COMMIT")
    except Exception as error:
        if db.in_transaction:
            db.execute("ROLLBACK")
        return [_Outcome(job.future, error, True) for job in group]
    return outcomes


def _resolve(outcomes: list[_Outcome]) -> None:
    for outcome in outcomes:
        if outcome.future.cancelled():
            continue
        if outcome.failed:
            outcome.future.set_exception(outcome.value)
        else:
            outcome.future.set_result(outcome.value)


class Checkpointer:
    """Copies the WAL back into the database file from a thread of its own, at most every
    :data:`CHECKPOINT_INTERVAL` seconds while there are writes.

    A ``PASSIVE`` checkpoint never waits and is never waited for, but under steady writes it
    never catches up with the last frames, and only a WAL checkpointed to its end is started
    over by the next writer. So once the WAL holds :data:`RESTART_FRAMES` pages,
    :attr:`restart_due` asks the store thread (which then takes the next write even from a
    caller that could write inline) to :meth:`finish` between two of its writes:
    it copies what is left and syncs (a few ms, once per ~1,000 exchanges, where SQLite's
    own checkpoint stalls the writer every ~120). A ``RESTART`` checkpoint from here would
    hold all writers back while SQLite's busy handler sleeps in steps of up to 100 ms.
    """

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self._connect = connect
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="safeagents-wal")
        self._lock = threading.Lock()
        self._busy = False
        self._again = False
        self._last = -math.inf
        self._closing = threading.Event()
        self._connection: sqlite3.Connection | None = None
        self.restart_due = False

    def wanted(self) -> None:
        """New frames were committed to the WAL."""
        with self._lock:
            if self._busy:
                self._again = True
                return
            self._busy = True
        self._executor.submit(self._work)

    def _work(self) -> None:
        while True:
            delay = self._last + CHECKPOINT_INTERVAL - time.monotonic()
            if delay > 0 and self._closing.wait(delay):
                break
            self._checkpoint()
            with self._lock:
                if not self._again:
                    self._busy = False
                    return
                self._again = False
        with self._lock:
            self._busy = False

    def _checkpoint(self) -> None:
        try:
            if self._connection is None:
                self._connection = self._connect()
            _, frames, _ = self._connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            self.restart_due = frames >= RESTART_FRAMES
        except sqlite3.Error:
            logger.debug("WAL checkpoint failed", exc_info=True)
        self._last = time.monotonic()

    def finish(self, writer: sqlite3.Connection) -> None:
        """Checkpoint the rest on the store's writing connection, between two of its writes."""
        self.restart_due = False
        try:
            writer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error:
            logger.debug("WAL checkpoint failed", exc_info=True)

    def close(self) -> None:
        self._closing.set()
        self._executor.shutdown(wait=True)
        if self._connection is not None:
            self._connection.close()
            self._connection = None
