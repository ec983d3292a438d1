"""The console's queries (filters, totals, pagination, rule counts) and the admin API's session
list, over a real SQLite file."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from store_kit import OpenBackend

from safeagents.store import (
    OUTCOMES,
    FindingRecord,
    SessionQuery,
    SessionTotals,
    SessionUpdate,
    SQLiteStore,
    Store,
    TurnRecord,
    _query,
    _sqlite_query,
    _sqlite_read,
    sqlite_query_sessions,
    sqlite_session_totals,
    sqlite_where,
)


def _turn(session_id: str, kind: str = "main", rule: str = "", call: str = "c1") -> TurnRecord:
    findings = ()
    if rule:
        findings = (FindingRecord(rule, "c", "high", "reject", call, "bash", "rm x", "no", True),)
    return TurnRecord(
        session_id=session_id,
        exchange="e",
        attempt=0,
        kind=kind,  # type: ignore[arg-type]
        status="ok",
        dialect="chat",
        harness="pi",
        model="m",
        stream=False,
        request={"messages": []},
        response={"choices": []},
        findings=findings,
    )


async def _fill(store: Store) -> None:
    # a: hacked by r1 (blocked twice on one call, re-asked once), succeeded
    # b: clean, failed; c: opencode, hacked by r2, unscored
    for session_id, harness, hacked, calls in [
        ("aa1", "pi", True, 3),
        ("ab2", "pi", False, 2),
        ("bc3", "opencode", True, 1),
    ]:
        update = SessionUpdate(session_id, harness, "chat", "/w", "m", "root", calls, hacked)
        turns = [_turn(session_id)]
        if session_id == "aa1":
            turns = [_turn(session_id, rule="r1"), _turn(session_id, "reask", rule="r1")]
        if session_id == "bc3":
            turns = [_turn(session_id, rule="r2", call="c9")]
        await store.record_exchange(update, turns)
        await asyncio.sleep(0.01)  # distinct update times
    await store.set_outcome("aa1", {"success": True})
    await store.set_outcome("ab2", {"success": False, "reward": 0.0})


def test_filters_totals_and_pages(open_backend: OpenBackend) -> None:
    """Every backend (the contract)."""

    async def scenario() -> None:
        store = open_backend("s")
        await _fill(store)

        async def ids(**fields: object) -> list[str]:
            found = await store.query_sessions(SessionQuery(**fields))  # type: ignore[arg-type]
            return [session.id for session in found]

        assert await ids() == ["bc3", "ab2", "aa1"]
        assert await ids(hacked=True) == ["bc3", "aa1"]
        assert await ids(hacked=False) == ["ab2"]
        assert await ids(harness="opencode") == ["bc3"]
        assert await ids(rule="r1") == ["aa1"]
        assert await ids(rule="nope") == []
        assert await ids(outcome="success") == ["aa1"]
        assert await ids(outcome="failure") == ["ab2"]
        assert await ids(outcome="unscored") == ["bc3"]
        assert await ids(id_prefix="a") == ["ab2", "aa1"]
        assert await ids(id_prefix="aa") == ["aa1"]
        first = (await store.query_sessions(SessionQuery(id_prefix="aa1")))[0]
        assert first.outcome == {"success": True}
        assert [f.rule_id for f in first.findings] == ["r1", "r1"]
        since = first.updated
        assert await ids(since=since) == ["bc3", "ab2", "aa1"]
        assert await ids(until=since) == []
        page = await store.query_sessions(SessionQuery(), limit=1, offset=1)
        assert [session.id for session in page] == ["ab2"]

        assert await store.session_totals(SessionQuery()) == SessionTotals(3, 6, 2, 1)
        assert await store.session_totals(SessionQuery(harness="pi")) == SessionTotals(2, 5, 1, 1)
        assert await store.session_totals(SessionQuery(rule="none")) == SessionTotals()

        counts = await store.rule_counts()
        assert set(counts) == {"r1", "r2"}
        assert (counts["r1"].findings, counts["r1"].blocked, counts["r1"].sessions) == (2, 2, 1)
        await store.close()

    asyncio.run(scenario())


def test_the_filters_and_totals_use_the_indexes(tmp_path: Path) -> None:
    asyncio.run(_open_close(tmp_path / "s.db"))
    db = sqlite3.connect(tmp_path / "s.db")

    def plan(sql: str, params: list[object]) -> str:
        return " ".join(str(row[3]) for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", params))

    where, params = sqlite_where(SessionQuery(rule="r1"))
    assert "findings_by_rule" in plan(f"SELECT id FROM sessions{where}", params)
    where, params = sqlite_where(SessionQuery(hacked=True, outcome="failure"))
    totals = "SELECT COUNT(*), SUM(tool_calls), SUM(blocked_calls), SUM(reasks) FROM sessions"
    assert "COVERING INDEX sessions_for_console" in plan(totals + where, params)


def test_a_schema_3_store_gets_its_counters_filled_on_open(tmp_path: Path) -> None:
    path = tmp_path / "s.db"

    async def write() -> None:
        store = SQLiteStore(path)
        await _fill(store)
        await store.close()

    asyncio.run(write())
    with sqlite3.connect(path) as db:  # back to schema 3: no counters, no console index
        db.execute("DROP INDEX sessions_for_console")
        for column in ("blocked_calls", "reasks", "success"):
            db.execute(f"ALTER TABLE sessions DROP COLUMN {column}")
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")

    async def read() -> None:
        store = SQLiteStore(path)
        assert await store.session_totals(SessionQuery()) == SessionTotals(3, 6, 2, 1)
        found = await store.query_sessions(SessionQuery(outcome="failure"))
        assert [session.id for session in found] == ["ab2"]
        await store.close()

    asyncio.run(read())


def _sessions(path: Path, count: int) -> sqlite3.Connection:
    """A store of ``count`` sessions, each scored, written directly (fast), pairs updated at
    the same moment."""
    asyncio.run(_open_close(path))
    db = sqlite3.connect(path)
    with db:
        db.executemany(
            "INSERT INTO sessions (id, harness, created, updated) VALUES (?, 'pi', 0, ?)",
            ((f"s{n:06d}", float(n // 2)) for n in range(count)),
        )
        db.executemany(
            "INSERT INTO outcomes (session_id, posted, outcome) VALUES (?, 0, ?)",
            ((f"s{n:06d}", f'{{"reward": {n}}}') for n in range(count)),
        )
    return db


def _steps(db: sqlite3.Connection, read: Callable[[], object]) -> int:
    """SQLite virtual-machine steps (in hundreds) that ``read`` took."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    db.set_progress_handler(count, 100)
    read()
    db.set_progress_handler(None, 100)
    return steps


def test_the_session_list_reads_its_page_alone(tmp_path: Path) -> None:
    small = _sessions(tmp_path / "small.db", 1_000)
    large = _sessions(tmp_path / "large.db", 20_000)
    page = _sqlite_read.list_sessions(large, 4, 2)
    assert [(s.id, s.outcome) for s in page] == [
        ("s019996", {"reward": 19996}),  # a tie on the update time: by id
        ("s019997", {"reward": 19997}),
        ("s019994", {"reward": 19994}),
        ("s019995", {"reward": 19995}),
    ]
    work = [
        _steps(db, lambda db=db: _sqlite_read.list_sessions(db, 50, 0)) for db in (small, large)
    ]
    assert work[1] < 2 * work[0] + 5, f"20 times the sessions took {work} steps: not a page"
    # the console's statements, on a connection of one's own
    assert sqlite_session_totals(large, SessionQuery()) == SessionTotals(20_000)
    (last,) = sqlite_query_sessions(large, SessionQuery(id_prefix="s01999"), 1, 0)
    assert (last.id, last.outcome) == ("s019999", {"reward": 19999})


async def _open_close(path: Path) -> None:
    store = SQLiteStore(path)
    await store.aliases()
    await store.close()


@pytest.mark.parametrize("module", [_query, _sqlite_query])
def test_all_is_what_the_module_defines(module: object) -> None:
    names = set(module.__all__)  # type: ignore[attr-defined]
    assert names and all(hasattr(module, name) for name in names)
    assert set(OUTCOMES) == {"success", "failure", "unscored"}
