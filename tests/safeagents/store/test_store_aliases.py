"""Model aliases (shared by every store object on one store, on every backend) and the SQLite
schema upgrade."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from store_kit import OpenBackend

from safeagents.store import NewerSchemaError, SessionUpdate, SQLiteStore, TurnRecord
from safeagents.store._schema import ADDED_COLUMNS, SCHEMA, SCHEMA_VERSION


def test_aliases_are_set_replaced_deleted_and_seen_by_another_store(
    open_backend: OpenBackend,
) -> None:
    async def scenario() -> None:
        first, second = open_backend("aliases"), open_backend("aliases")
        assert await first.aliases() == {}
        await first.set_alias("pi", "pi-v1")
        await first.set_alias("codex", "codex-v1")
        await second.set_alias("pi", "pi-v2")
        assert await first.aliases() == {"codex": "codex-v1", "pi": "pi-v2"}
        assert await second.delete_alias("codex") is True
        assert await first.delete_alias("codex") is False
        assert await first.aliases() == {"pi": "pi-v2"}
        await first.close()
        await second.close()
        reopened = open_backend("aliases")
        assert await reopened.aliases() == {"pi": "pi-v2"}
        await reopened.close()

    asyncio.run(scenario())


def test_a_start_applies_its_flags_but_keeps_the_aliases_set_through_the_admin_api(
    open_backend: OpenBackend,
) -> None:
    async def scenario() -> None:
        first, second = open_backend("start"), open_backend("start")

        async def version() -> int:
            return (await second.live_state("nobody")).aliases_version

        flags = {"pi": "pi-base", "codex": "codex-base"}
        assert await first.start_aliases(flags) == {}
        assert await second.aliases() == flags
        before = await version()
        assert await first.start_aliases(flags) == {}  # a restart with the same flags
        assert await version() == before
        await second.set_alias("pi", "pi-v7")  # the trainer published an adapter
        await second.set_alias("hermes", "hermes-v2")
        changed = {"pi": "pi-base2", "claude-code": "claude-base"}  # codex's flag dropped
        assert await first.start_aliases(changed) == {"pi": "pi-v7"}
        assert await second.aliases() == {
            "claude-code": "claude-base",
            "hermes": "hermes-v2",
            "pi": "pi-v7",
        }
        assert await first.start_aliases({"pi": "pi-v7"}) == {}  # agrees: nothing to report
        assert await second.aliases() == {"hermes": "hermes-v2", "pi": "pi-v7"}
        assert await first.delete_alias("pi") is True  # back to the flags from the next start
        before = await version()
        assert await first.start_aliases(changed) == {}
        assert await version() != before
        assert await second.aliases() == {
            "claude-code": "claude-base",
            "hermes": "hermes-v2",
            "pi": "pi-base2",
        }
        await first.close()
        await second.close()

    asyncio.run(scenario())


def test_starts_at_the_same_moment_apply_one_set_of_flags_whole(
    open_backend: OpenBackend,
) -> None:
    """Each start reads and writes the aliases in one transaction: of starts racing with
    different flags, one wins entirely (no mix of two instances' flags)."""

    async def scenario() -> None:
        stores = [open_backend("race") for _ in range(6)]
        for round_ in range(5):
            choices = [{"pi": f"pi-{round_}-{n}", "codex": f"codex-{round_}-{n}"} for n in range(6)]
            await asyncio.gather(
                *(s.start_aliases(f) for s, f in zip(stores, choices, strict=True))
            )
            assert await stores[0].aliases() in choices
        for store in stores:
            await store.close()

    asyncio.run(scenario())


def _old_schema() -> list[str]:
    """The statements of the first schema: today's, less every column added since."""
    statements = []
    for statement in SCHEMA:
        if "model_aliases" in statement:
            continue
        for version, table, column, _ in ADDED_COLUMNS:
            if version > 1 and f"TABLE IF NOT EXISTS {table} " in statement:
                lines = statement.splitlines()
                statement = "\n".join(line for line in lines if column not in line)
        statements.append(statement)
    return statements


def _columns(path: Path, table: str) -> set[str]:
    with sqlite3.connect(path) as db:
        return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def test_a_store_written_by_the_first_schema_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        for statement in _old_schema():
            db.execute(statement)
        db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', '1')")
        db.execute(  # as schema 4 had it: an alias without its origin
            "CREATE TABLE model_aliases (harness TEXT PRIMARY KEY, model TEXT NOT NULL, "
            "updated REAL NOT NULL)"
        )
        db.execute("INSERT INTO model_aliases VALUES ('codex', 'codex-old', 1)")
        db.execute(
            "INSERT INTO sessions (id, harness, created, updated, turns) "
            "VALUES ('old', 'pi', 1, 1, 1)"
        )
        db.execute(
            "INSERT INTO turns (session_id, seq, exchange, attempt, kind, status, dialect, "
            "harness, model, stream, started, ended) "
            "VALUES ('old', 1, 'e', 0, 'main', 'ok', 'chat', 'pi', 'm', 0, 1, 2)"
        )
    assert "requested_model" not in _columns(path, "turns")

    async def scenario() -> None:
        store = SQLiteStore(path)
        (old,) = await store.turns("old")
        assert (old.model, old.requested_model) == ("m", "")
        update = SessionUpdate("old", "pi", "chat", "/workspace", "m", "")
        turn = TurnRecord(
            "old",
            "e2",
            0,
            "main",
            "ok",
            "chat",
            "pi",
            "pi-v3",
            False,
            None,
            None,
            requested_model="m",
        )
        await store.record_exchange(update, [turn])
        new = (await store.turns("old"))[-1]
        assert (new.seq, new.model, new.requested_model) == (2, "pi-v3", "m")
        await store.set_alias("pi", "pi-v3")
        assert await store.start_aliases({"codex": "codex-new"}) == {}  # was flags' to change
        assert await store.aliases() == {"codex": "codex-new", "pi": "pi-v3"}
        await store.close()

    asyncio.run(scenario())
    assert "requested_model" in _columns(path, "turns")
    with sqlite3.connect(path) as db:
        (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert version == str(SCHEMA_VERSION)


def test_a_store_written_by_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION + 1),))

    async def scenario() -> None:
        store = SQLiteStore(path)
        with pytest.raises(NewerSchemaError, match="newer than the"):
            await store.list_sessions()
        await store.close()

    asyncio.run(scenario())
    with sqlite3.connect(path) as db:
        (version,) = db.execute("SELECT value FROM meta").fetchone()
    assert version == str(SCHEMA_VERSION + 1)  # left as it was
