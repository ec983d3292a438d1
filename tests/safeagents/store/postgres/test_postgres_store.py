"""PostgresStore against a real server: the migration lock and version check, the session row
lock under instances writing one session at once, the aliases' version, NUL characters, and
clear errors when the server cannot be used."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from store_kit import make_turn, make_update

from safeagents.exchange._aliases import ModelAliases
from safeagents.store import (
    FindingRecord,
    HiddenEntry,
    NewerSchemaError,
    StoreConnectionError,
    TurnRecord,
    open_store,
)
from safeagents.store._schema import SCHEMA_VERSION
from safeagents.store.postgres import PostgresStore


def _version(url: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert row is not None
    return str(row[0])


def test_open_store_takes_a_url_and_instances_starting_at_once_migrate_once(
    postgres_url: str,
) -> None:
    async def scenario() -> None:
        stores = [open_store(postgres_url) for _ in range(6)]
        assert all(isinstance(store, PostgresStore) for store in stores)
        await asyncio.gather(*(store.list_sessions() for store in stores))
        for store in stores:
            await store.close()

    asyncio.run(scenario())
    assert _version(postgres_url) == str(SCHEMA_VERSION)
    with psycopg.connect(postgres_url) as conn:
        kinds: dict[str, str] = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = 'turns' AND column_name IN ('id', 'started')"
            ).fetchall()
        )
    assert kinds == {"id": "bigint", "started": "double precision"}


def test_a_newer_schema_is_refused_with_a_clear_error(postgres_url: str) -> None:
    asyncio.run(_touch(postgres_url))
    with psycopg.connect(postgres_url) as conn:
        conn.execute("UPDATE meta SET value = %s", (str(SCHEMA_VERSION + 1),))

    async def scenario() -> None:
        store = PostgresStore(postgres_url)
        with pytest.raises(NewerSchemaError, match=f"schema version {SCHEMA_VERSION + 1}"):
            await store.list_sessions()
        await store.close()

    asyncio.run(scenario())


async def _touch(url: str) -> None:
    store = PostgresStore(url)
    await store.list_sessions()
    await store.close()


def test_an_older_schema_gets_the_columns_added_since(postgres_url: str) -> None:
    asyncio.run(_touch(postgres_url))
    with psycopg.connect(postgres_url) as conn:
        conn.execute("ALTER TABLE sessions DROP COLUMN sampling")
        conn.execute("UPDATE meta SET value = '2'")

    async def scenario() -> None:
        store = PostgresStore(postgres_url)
        opened = await store.open_session("s", cwd="/w", sampling={"temperature": 0.5})
        assert opened.sampling == {"temperature": 0.5}
        await store.close()

    asyncio.run(scenario())
    assert _version(postgres_url) == str(SCHEMA_VERSION)


def test_two_instances_writing_one_session_at_once_keep_one_history(postgres_url: str) -> None:
    """Exchanges of one session sent to two instances at once: every turn, finding and hidden
    entry lands once, sequence numbers run without gaps or duplicates, counters add up."""

    async def scenario() -> None:
        first, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
        finding = FindingRecord("r", "c", "high", "reject", "call", "bash", "s", "m", True)

        def exchange(store: PostgresStore, n: int) -> asyncio.Future[list[TurnRecord]]:
            hidden = HiddenEntry("chat", "pair", n, f"a{n}", ({"n": n},))
            turns = [
                make_turn("s", f"x{n}", findings=(finding,)),
                make_turn("s", f"x{n}", attempt=1),
            ]
            update = make_update("s", hacked=n == 7)
            return asyncio.ensure_future(store.record_exchange(update, turns, [hidden]))

        results = await asyncio.gather(
            *(exchange(first if n % 2 else second, n) for n in range(30))
        )
        seqs = sorted(turn.seq for turns in results for turn in turns)
        assert seqs == list(range(1, 61))
        for turns in results:  # an exchange's turns are consecutive
            assert turns[1].seq == turns[0].seq + 1
        stored = await first.turns("s")
        assert [turn.seq for turn in stored] == list(range(1, 61))
        assert sorted(turn.exchange for turn in stored if turn.attempt == 0) == sorted(
            f"x{n}" for n in range(30)
        )
        session = await second.get_session("s")
        assert session is not None
        assert (session.turns, session.tool_calls, session.hacked) == (60, 30, True)
        assert len(session.findings) == 30
        live = await first.live_state("s")
        assert sorted(entry.at for entry in live.hidden) == list(range(30))
        await first.close()
        await second.close()

    asyncio.run(scenario())


def test_an_alias_change_reaches_another_instance_on_its_next_request(
    postgres_url: str,
) -> None:
    """An alias changed through one store changes the version the other's next live_state
    gives (its copy then reads them), and nothing else does."""

    async def scenario() -> None:
        mine, theirs = PostgresStore(postgres_url), PostgresStore(postgres_url)
        copy = ModelAliases(mine)
        version = (await mine.live_state("s")).aliases_version
        assert await copy.target("pi", version) is None
        await mine.record_exchange(make_update("s"), [make_turn("s")])
        assert (await mine.live_state("s")).aliases_version == version
        await theirs.set_alias("pi", "pi-v2")
        changed = (await mine.live_state("s")).aliases_version
        assert changed != version and (await mine.live_state("new")).aliases_version == changed
        assert await copy.target("pi", changed) == "pi-v2"
        assert await theirs.delete_alias("nobody") is False
        assert (await mine.live_state("s")).aliases_version == changed
        assert await theirs.delete_alias("pi") is True
        deleted = (await mine.live_state("s")).aliases_version
        assert deleted != changed and await copy.target("pi", deleted) is None
        await mine.close()
        await theirs.close()

    asyncio.run(scenario())


def test_nul_characters_are_stored_as_replacement_characters(postgres_url: str) -> None:
    async def scenario() -> None:
        store = PostgresStore(postgres_url)
        finding = FindingRecord("r", "c", "high", "flag", "c\x00", "bash", "rm\x00-rf", "m", False)
        turn = make_turn("s", "e", findings=(finding,), error="bad\x00byte")
        await store.record_exchange(make_update("s"), [turn])
        (stored,) = await store.turns("s")
        assert stored.error == "bad\ufffdbyte"
        assert stored.findings[0].summary == "rm\ufffd-rf"
        assert stored.request == turn.request
        await store.close()

    asyncio.run(scenario())


def test_an_unreachable_server_is_a_clear_error_and_the_password_stays_hidden() -> None:
    async def scenario() -> None:
        store = PostgresStore("postgresql://u:s3cret@127.0.0.1:1/db", max_connections=1)
        assert "s3cret" not in repr(store)
        with pytest.raises(StoreConnectionError, match="cannot use the store") as raised:
            await store.get_session("s")
        assert "s3cret" not in str(raised.value) and "127.0.0.1" in str(raised.value)
        await store.close()

    asyncio.run(scenario())


def test_an_exchange_that_fails_leaves_nothing_and_the_store_goes_on(postgres_url: str) -> None:
    async def scenario() -> None:
        store = PostgresStore(postgres_url, max_connections=1)  # the failed one is reused
        await store.record_exchange(make_update("s"), [make_turn("s", "first")])
        orphan = make_turn("nobody", "orphan")  # no such session: the foreign key refuses it
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            await store.record_exchange(
                make_update("s", tool_calls=5), [make_turn("s", "x"), orphan]
            )
        stored = await store.record_exchange(make_update("s"), [make_turn("s", "second")])
        assert [turn.seq for turn in stored] == [2]
        session = await store.get_session("s")
        assert session is not None and (session.turns, session.tool_calls) == (2, 2)
        assert [turn.exchange for turn in await store.turns("s")] == ["first", "second"]
        await store.close()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "url",
    ["postgresql://%zz@127.0.0.1/db", "postgresql://u@127.0.0.1:1/db?sslmode=bogus"],
)
def test_a_url_that_does_not_parse_is_a_clear_error(url: str) -> None:
    async def scenario() -> None:
        store = open_store(url)
        with pytest.raises(StoreConnectionError, match="cannot use the store"):
            await store.list_sessions()
        await store.close()

    asyncio.run(scenario())


def test_a_schema_3_database_gets_its_counters_filled(postgres_url: str) -> None:
    blocked = FindingRecord("r", "c", "high", "reject", "call", "bash", "s", "m", True)

    async def record() -> None:
        store = PostgresStore(postgres_url)
        turns = [make_turn("s", findings=(blocked,)), make_turn("s", kind="reask")]
        await store.record_exchange(make_update("s"), turns)
        await store.set_outcome("s", {"success": True})
        await store.close()

    asyncio.run(record())
    with psycopg.connect(postgres_url) as conn:
        counted = "SELECT blocked_calls, reasks, success FROM sessions WHERE id = 's'"
        assert conn.execute(counted).fetchone() == (1, 1, 1)
        conn.execute("UPDATE sessions SET blocked_calls = 0, reasks = 0, success = NULL")
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    asyncio.run(_touch(postgres_url))
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute(counted).fetchone() == (1, 1, 1)
    assert _version(postgres_url) == str(SCHEMA_VERSION)


def test_a_schema_4_database_gets_alias_origins_and_revealed_findings(postgres_url: str) -> None:
    """Schema 5: an alias of schema 4 counts as set by flags (a start may change it), and
    a revealed finding is stored once per session from then on."""
    asyncio.run(_touch(postgres_url))
    with psycopg.connect(postgres_url) as conn:
        conn.execute("DROP INDEX findings_revealed_once")
        conn.execute("ALTER TABLE findings DROP COLUMN revealed")
        conn.execute("ALTER TABLE model_aliases DROP COLUMN origin")
        conn.execute("INSERT INTO model_aliases VALUES ('codex', 'codex-old', 1)")
        conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    revealed = FindingRecord("d", "c", "high", "flag", "", "bash", "rm a", "m", revealed=True)

    async def upgraded() -> None:
        store = PostgresStore(postgres_url)
        assert await store.start_aliases({"codex": "codex-new"}) == {}
        assert await store.aliases() == {"codex": "codex-new"}
        turns = [make_turn("s", "e1", findings=(revealed,)), make_turn("s", "e2")]
        await store.record_exchange(make_update("s"), turns)
        await store.record_exchange(make_update("s"), [make_turn("s", "e3", findings=(revealed,))])
        stored = [f for turn in await store.turns("s") for f in turn.findings]
        assert stored == [revealed]
        await store.close()

    asyncio.run(upgraded())
    assert _version(postgres_url) == str(SCHEMA_VERSION)


def test_a_store_used_from_a_second_event_loop_says_so_and_still_closes(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(store.open_session("s", cwd="/w", harness="pi"))
        for call in (store.get_session("s"), store.close()):
            with pytest.raises(RuntimeError, match="serves the event loop it was first used on"):
                asyncio.run(call)
        assert loop.run_until_complete(store.get_session("s")) is not None
    finally:
        loop.run_until_complete(store.close())
        loop.close()
