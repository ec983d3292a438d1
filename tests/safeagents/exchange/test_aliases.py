"""ModelAliases: a per-process copy of the store's aliases, read again when their version moves."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from safeagents._registry import default_registry
from safeagents.exchange._aliases import ModelAliases, canonical_aliases, start_aliases
from safeagents.store import SQLiteStore


class CountingStore(SQLiteStore):
    """Counts alias reads; while ``gate`` is set, a read's answer waits for it to open; the
    next ``failures`` reads fail."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self.reads = 0
        self.failures = 0
        self.gate: asyncio.Event | None = None

    async def aliases(self) -> dict[str, str]:
        self.reads += 1
        found = await super().aliases()
        if self.gate is not None:
            await self.gate.wait()
        if self.failures:
            self.failures -= 1
            raise sqlite3.OperationalError("disk I/O error")
        return found


async def _version(store: SQLiteStore) -> int:
    """The aliases' version a request reads with its session."""
    return (await store.live_state("any")).aliases_version


def test_reads_the_store_only_when_the_version_moved_and_sees_other_stores_at_once(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        path = tmp_path / "version.db"
        store, other = CountingStore(path), SQLiteStore(path)
        aliases = ModelAliases(store)
        assert await _version(store) == 0
        assert await aliases.target("pi", 0) is None and store.reads == 1
        await other.set_alias("pi", "pi-v1")
        first = await _version(store)
        assert first == 1
        assert [await aliases.target("pi", first) for _ in range(10)] == ["pi-v1"] * 10
        assert store.reads == 2
        await other.set_alias("pi", "pi-v2")
        second = await _version(store)
        assert second == 2
        assert await aliases.target("pi", second) == "pi-v2" and store.reads == 3
        assert await aliases.target("codex", second) is None and store.reads == 3
        assert await other.delete_alias("codex") is False
        assert await _version(store) == second  # nothing changed: nothing to read
        assert await other.delete_alias("pi") is True
        third = await _version(store)
        assert third == 3 and await aliases.target("pi", third) is None
        await store.close()
        await other.close()

    asyncio.run(scenario())


def test_concurrent_stale_requests_share_one_read(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = CountingStore(tmp_path / "shared.db")
        await store.set_alias("pi", "pi-v1")
        aliases = ModelAliases(store)
        store.gate = asyncio.Event()
        waiting = [asyncio.ensure_future(aliases.target("pi", 1)) for _ in range(20)]
        await asyncio.sleep(0.01)
        store.gate.set()
        assert await asyncio.gather(*waiting) == ["pi-v1"] * 20
        assert store.reads == 1
        await store.close()

    asyncio.run(scenario())


def test_a_local_change_applies_at_once_and_beats_a_read_already_in_flight(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        store = CountingStore(tmp_path / "race.db")
        await store.set_alias("pi", "pi-v1")
        aliases = ModelAliases(store)
        store.gate = asyncio.Event()
        stale = asyncio.ensure_future(aliases.target("pi", 1))
        await asyncio.sleep(0.01)
        await aliases.set("pi", "pi-v2")  # the read in flight predates this
        store.gate.set()
        assert await stale == "pi-v2"
        assert await aliases.target("pi", 1) == "pi-v2"
        store.gate = None
        assert await aliases.delete("pi") is True and await aliases.target("pi", 1) is None
        reads = store.reads
        assert await aliases.target("pi", await _version(store)) is None
        assert store.reads == reads + 1  # its own changes moved the version: read once
        assert await aliases.current() == {} and store.reads == reads + 2
        await store.close()

    asyncio.run(scenario())


def test_a_failed_read_is_retried_and_a_cancelled_waiter_does_not_cancel_it(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        store = CountingStore(tmp_path / "retry.db")
        await store.set_alias("pi", "pi-v1")
        aliases = ModelAliases(store)
        store.gate = asyncio.Event()
        gone, waiting = (asyncio.ensure_future(aliases.target("pi", 1)) for _ in range(2))
        await asyncio.sleep(0.01)
        gone.cancel()  # its client went away
        store.failures = 1
        store.gate.set()
        with pytest.raises(sqlite3.OperationalError):
            await waiting
        assert gone.cancelled() and store.reads == 1
        store.gate = None
        assert await aliases.target("pi", 1) == "pi-v1" and store.reads == 2
        await store.close()

    asyncio.run(scenario())


def test_start_up_aliases_are_canonical_and_replace_those_of_earlier_flags(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    registry = default_registry()
    assert canonical_aliases(registry, {"claude": "a", "PI": "b"}) == {
        "claude-code": "a",
        "pi": "b",
    }
    with pytest.raises(ValueError, match="nobody"):
        canonical_aliases(registry, {"nobody": "x"})

    async def scenario() -> None:
        store = SQLiteStore(tmp_path / "reset.db")
        await start_aliases(store, {"codex": "old", "pi": "old"})
        await store.set_alias("claude-code", "published")  # through the admin API
        await start_aliases(store, {"pi": "new", "hermes": "h", "claude-code": "flag"})
        assert await store.aliases() == {"claude-code": "published", "hermes": "h", "pi": "new"}
        await store.close()

    asyncio.run(scenario())
    (warning,) = [r for r in caplog.records if r.levelname == "WARNING"]
    assert warning.getMessage() == (
        "--model-alias claude-code=flag not applied: the alias claude-code=published was set "
        "through the admin API (DELETE /safeagents/v1/aliases/claude-code, then restart, "
        "to return to the flag)"
    )
