"""The SQLite write path: group commits, writes and reads on the caller's thread, lighter turn
rows, and WAL checkpoints that keep the log short without stalling the writer."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from store_kit import OpenBackend, make_update

from safeagents.store import (
    HiddenEntry,
    SQLiteStore,
    TurnRecord,
)
from safeagents.store import _sqlite_worker as worker
from safeagents.store._sqlite_read import SAME_AS_RESPONSE

RESPONSE = {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}


def _turn(session_id: str, exchange: str = "e", **changes: object) -> TurnRecord:
    fields: dict[str, object] = {
        "session_id": session_id,
        "exchange": exchange,
        "attempt": 0,
        "kind": "main",
        "status": "ok",
        "dialect": "chat",
        "harness": "pi",
        "model": "m",
        "stream": False,
        "request": {"messages": [{"role": "user", "content": "hi"}]},
        "response": RESPONSE,
        "delivered": RESPONSE,
    }
    fields.update(changes)
    return TurnRecord(**fields)  # type: ignore[arg-type]


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()


def test_concurrent_exchanges_all_land_with_their_own_sequence(
    open_backend: OpenBackend,
) -> None:
    """Every backend (the contract); SQLite commits these in groups."""

    async def scenario() -> None:
        store = open_backend("s")
        calls = [
            store.record_exchange(make_update(f"s{n % 4}"), [_turn(f"s{n % 4}", f"x{n}")])
            for n in range(40)
        ]
        results = await asyncio.gather(*calls)
        assert [turns[0].exchange for turns in results] == [f"x{n}" for n in range(40)]
        for session in range(4):
            turns = await store.turns(f"s{session}")
            assert [turn.seq for turn in turns] == list(range(1, 11))
            record = await store.get_session(f"s{session}")
            assert record is not None and (record.turns, record.tool_calls) == (10, 10)
        await store.close()

    asyncio.run(scenario())


def test_exchanges_queued_together_share_one_commit_and_fail_alone(tmp_path: Path) -> None:
    """Held behind a slow statement, queued exchanges form one group: one COMMIT for all,
    and the one that fails is rolled back to its savepoint without taking the others along."""
    statements: list[str] = []

    def connect() -> sqlite3.Connection:
        db = sqlite3.connect(tmp_path / "g.db", isolation_level=None, check_same_thread=False)
        db.execute("CREATE TABLE IF NOT EXISTS t (v INTEGER NOT NULL)")
        db.set_trace_callback(statements.append)
        return db

    def insert(value: int | None) -> worker.Statements[int]:
        def run(db: sqlite3.Connection) -> int:
            db.execute("INSERT INTO t (v) VALUES (1)")  # undone if the next one fails
            db.execute("INSERT INTO t (v) VALUES (?)", (value,))
            return value or 0

        return run

    async def scenario() -> None:
        thread = worker.StoreThread(connect)
        await thread.submit(lambda db: None)
        release = threading.Event()
        blocker = thread.submit(lambda db: release.wait(5))
        writes = [thread.submit(insert(v), exchange=True) for v in (10, None, 30)]
        statements.clear()
        release.set()
        await blocker
        results = await asyncio.gather(*writes, return_exceptions=True)
        assert results[0] == 10 and results[2] == 30
        assert isinstance(results[1], sqlite3.IntegrityError)
        assert statements.count("COMMIT") == 1 and statements.count("BEGIN IMMEDIATE") == 1
        values = await thread.submit(lambda db: db.execute("SELECT v FROM t").fetchall())
        assert sorted(v for (v,) in values) == [1, 1, 10, 30]
        await thread.close()

    asyncio.run(scenario())


def test_inline_writes_and_direct_reads_see_other_processes(tmp_path: Path) -> None:
    """A second store on the file stands for another worker process."""

    async def scenario() -> None:
        path = tmp_path / "s.db"
        mine, other = SQLiteStore(path), SQLiteStore(path)
        await mine.record_exchange(make_update("s"), [_turn("s")], inline=True)  # creates the file
        await mine.record_exchange(make_update("s", main=(2, "k")), [_turn("s")], inline=True)
        live = await mine.live_state("s")  # read on this thread: it wrote last
        assert live.session is not None and live.session.main_key == "k"
        pair = HiddenEntry("chat", "pair", 2, "k", ({"role": "assistant"},))
        await other.record_exchange(make_update("s"), [_turn("s")], [pair])
        live = await mine.live_state("s")
        assert live.hidden == (pair,) and live.session is not None and live.session.turns == 3
        assert [turn.seq for turn in await other.turns("s")] == [1, 2, 3]
        await mine.close()
        await other.close()

    asyncio.run(scenario())


def test_a_read_after_a_queued_write_sees_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        path = tmp_path / "s.db"
        store = SQLiteStore(path)
        await store.record_exchange(make_update("s"), [_turn("s")])  # creates the file
        await store.record_exchange(make_update("s"), [_turn("s")], inline=True)
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock a while
        pair = HiddenEntry("chat", "pair", 1, "a", ({"role": "assistant"},))
        write = asyncio.ensure_future(store.record_exchange(make_update("s"), [_turn("s")], [pair]))
        await asyncio.sleep(0.02)  # queued, waiting for the lock
        threading.Timer(0.1, other.execute, ("COMMIT",)).start()
        live = await store.live_state("s")
        assert live.hidden == (pair,)
        await write
        other.close()
        await store.close()

    asyncio.run(scenario())


def test_an_inline_write_never_holds_the_event_loop_on_a_lock(tmp_path: Path) -> None:
    """Another process holds the write lock: the write waits on the store thread instead."""

    async def scenario() -> None:
        path = tmp_path / "s.db"
        store = SQLiteStore(path)
        await store.record_exchange(make_update("s"), [_turn("s")])
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")
        threading.Timer(0.3, other.execute, ("COMMIT",)).start()
        ticks: list[float] = []
        loop = asyncio.get_running_loop()
        for delay in (0.05, 0.1, 0.15):
            loop.call_later(delay, lambda: ticks.append(time.monotonic()))
        started = time.monotonic()
        await store.record_exchange(make_update("s"), [_turn("s")], inline=True)
        assert time.monotonic() - started >= 0.25  # it did wait for the lock ...
        assert len(ticks) == 3 and ticks[0] - started < 0.2  # ... but not on the loop
        assert len(await store.turns("s")) == 2
        other.close()
        await store.close()

    asyncio.run(scenario())


def test_an_unchanged_answer_is_stored_once_and_read_back_whole(tmp_path: Path) -> None:
    async def scenario() -> None:
        path = tmp_path / "s.db"
        store = SQLiteStore(path)
        changed = {"choices": [{"message": {"role": "assistant", "content": "edited"}}]}
        await store.record_exchange(
            make_update("s"),
            [
                _turn("s", "same"),
                _turn("s", "equal", delivered={**RESPONSE}),
                _turn("s", "changed", delivered=changed),
                _turn("s", "withheld", delivered=None),
            ],
        )
        stored = [row[0] for row in _rows(path, "SELECT delivered FROM turns ORDER BY seq")]
        assert stored[:2] == [SAME_AS_RESPONSE, SAME_AS_RESPONSE]
        assert stored[2] is not None and "edited" in str(stored[2]) and stored[3] is None
        turns = await store.turns("s")
        assert [turn.delivered for turn in turns] == [RESPONSE, RESPONSE, changed, None]
        assert turns[0].delivered is not turns[0].response  # readers may change either
        await store.close()

    asyncio.run(scenario())


def test_request_text_given_by_the_caller_is_stored_as_is(tmp_path: Path) -> None:
    async def scenario() -> None:
        path = tmp_path / "s.db"
        store = SQLiteStore(path)
        text = '{ "messages" : [ {"role": "user", "content": "hi"} ] }'
        await store.record_exchange(make_update("s"), [_turn("s", request_json=text)])
        assert _rows(path, "SELECT request FROM turns") == [(text,)]
        (turn,) = await store.turns("s")
        assert turn.request == {"messages": [{"role": "user", "content": "hi"}]}
        await store.close()

    asyncio.run(scenario())


def _wal_pages(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return (wal.stat().st_size // 4096) if wal.exists() else 0


def test_checkpoints_copy_the_wal_back_and_restart_it_under_steady_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker, "CHECKPOINT_INTERVAL", 0.005)
    monkeypatch.setattr(worker, "RESTART_FRAMES", 80)

    async def scenario() -> None:
        path = tmp_path / "s.db"
        store = SQLiteStore(path)
        for inline in (False, True):  # through the store thread, and on this one (one client)
            for n in range(300):  # steady writes, never idle for long
                session = f"s{n % 8}"
                await store.record_exchange(make_update(session), [_turn(session)], inline=inline)
                if n % 10 == 9:
                    # a breath for the checkpoint thread: in a long test run other threads
                    # compete for the GIL, and a tight burst could starve it
                    await asyncio.sleep(0.002)
            assert _wal_pages(path) < 1200  # ~8 pages an exchange: 2,400 if never started over
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            # the database file alone (WAL ignored) holds what was checkpointed
            uri = f"file:{path}?immutable=1"
            with sqlite3.connect(uri, uri=True) as db:
                (count,) = db.execute("SELECT COUNT(*) FROM turns").fetchone()
            if count == 600:
                break
            await asyncio.sleep(0.02)
        assert count == 600
        await store.close()

    asyncio.run(scenario())
