"""copy_store (``safeagents store migrate``): a SQLite store copied into PostgreSQL reads back
the same; a second run skips what is there whole and finishes or refreshes the rest."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest
from store_kit import make_turn

from safeagents.store import (
    CopyError,
    FindingRecord,
    HiddenEntry,
    SessionUpdate,
    SQLiteStore,
    Store,
    TokenRecord,
    TurnRecord,
    copy_store,
)
from safeagents.store.postgres import PostgresStore

RESPONSE = {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}


def _turn(session_id: str, n: int) -> TurnRecord:
    finding = FindingRecord("r", "c", "high", "reject", f"call{n}", "bash", "rm", "no", True)
    revealed = FindingRecord("d", "c", "high", "flag", "", "bash", "rm a", "no", revealed=True)
    return make_turn(
        session_id,
        f"e{n}",
        stream=n % 2 == 0,
        request={"messages": [{"role": "user", "content": f"héllo {n}"}]},
        response=RESPONSE,
        delivered=RESPONSE if n % 2 else None,
        findings=(finding,) if n % 2 == 0 else (revealed,) if n == 1 else (),
        tokens=TokenRecord((1, 2), (3,), (-0.5,)),
        started=float(n),
        ended=n + 0.5,
    )


async def _record(store: Store, session_id: str, count: int) -> None:
    update = SessionUpdate(session_id, "pi", "chat", "/w", "m", "root", tool_calls=1, hacked=True)
    hidden = HiddenEntry("chat", "pair", count, "anchor", ({"role": "assistant"},))
    await store.record_exchange(update, [_turn(session_id, n) for n in range(count)], [hidden])


async def _fill(path: Path) -> None:
    store = SQLiteStore(path)
    for number in range(3):
        await _record(store, f"s{number}", number + 1)
    await store.set_outcome("s1", {"success": True, "reward": 1.0})
    await store.open_session("empty", cwd="/srv", sampling={"temperature": 0.7})
    await store.set_alias("pi", "pi-v2")
    await store.start_aliases({"codex": "codex-base"})
    await store.close()


async def _same(path: Path, url: str) -> None:
    sqlite, postgres = SQLiteStore(path), PostgresStore(url)
    listed = await sqlite.list_sessions()
    assert {s.id for s in listed} == {s.id for s in await postgres.list_sessions()}
    for session in listed:
        assert await postgres.get_session(session.id) == await sqlite.get_session(session.id)
        assert await postgres.turns(session.id) == await sqlite.turns(session.id)
        copied, original = (
            await postgres.live_state(session.id),
            await sqlite.live_state(session.id),
        )
        assert (copied.session, copied.hidden) == (original.session, original.hidden)
    assert await postgres.aliases() == {"codex": "codex-base", "pi": "pi-v2"}
    with psycopg.connect(url) as conn:  # who set each alias travels with it
        origins = conn.execute("SELECT harness, origin FROM model_aliases ORDER BY 1").fetchall()
    assert origins == [("codex", "flags"), ("pi", "admin")]
    assert (await postgres.live_state("any")).aliases_version > 0  # instances re-read them
    await sqlite.close()
    await postgres.close()


def test_a_copy_reads_back_the_same_and_a_second_run_skips_it(
    tmp_path: Path, postgres_url: str
) -> None:
    path = tmp_path / "s.db"
    asyncio.run(_fill(path))
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int, session_id: str) -> None:
        seen.append((done, total))

    report = asyncio.run(copy_store(f"sqlite:{path}", postgres_url, progress))
    assert (report.sessions, report.copied, report.skipped) == (4, 4, 0)
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert report.counts["turns"] == (6, 6) and report.counts["findings"] == (6, 6)
    assert report.counts["hidden"] == (3, 3) and report.counts["outcomes"] == (1, 1)
    asyncio.run(_same(path, postgres_url))
    again = asyncio.run(copy_store(str(path), postgres_url))
    assert (again.copied, again.skipped) == (0, 4)


def test_a_rerun_finishes_a_partial_copy_and_takes_new_turns(
    tmp_path: Path, postgres_url: str
) -> None:
    path = tmp_path / "s.db"
    asyncio.run(_fill(path))
    asyncio.run(copy_store(str(path), postgres_url))
    with psycopg.connect(postgres_url) as conn:  # a copy that stopped half-way through s2
        conn.execute("DELETE FROM findings WHERE session_id = 's2'")
        conn.execute("DELETE FROM turns WHERE session_id = 's2' AND seq > 1")

    async def more() -> None:
        store = SQLiteStore(path)
        await _record(store, "s0", 2)
        await store.close()

    asyncio.run(more())
    report = asyncio.run(copy_store(str(path), postgres_url))
    assert (report.copied, report.skipped) == (2, 2)
    assert report.counts["turns"] == (8, 8)
    asyncio.run(_same(path, postgres_url))


def test_a_missing_source_is_a_clear_error(tmp_path: Path, postgres_url: str) -> None:
    with pytest.raises(CopyError, match="no SQLite store at"):
        asyncio.run(copy_store(str(tmp_path / "absent.db"), postgres_url))
    assert not (tmp_path / "absent.db").exists()
