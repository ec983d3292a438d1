"""Per-harness model aliases: which model the upstream is asked for on a harness's behalf.

The aliases live in the store, so every worker process (and, on PostgreSQL, every instance) of
one proxy applies the same ones. Each process reads them through a copy: re-read when the store
announces a change (PostgreSQL's ``NOTIFY``), else at most every :data:`ALIAS_TTL` seconds.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Mapping

from safeagents._registry import Registry
from safeagents.store import Store

__all__ = ["ALIAS_TTL", "ModelAliases", "canonical_aliases", "reset_aliases"]

ALIAS_TTL = 0.25


def canonical_aliases(registry: Registry, aliases: Mapping[str, str]) -> dict[str, str]:
    """``aliases`` keyed by the harnesses' registered names; :class:`ValueError` for a
    harness no plugin provides."""
    return {registry.harness(harness).name: model for harness, model in aliases.items()}


async def reset_aliases(store: Store, aliases: Mapping[str, str]) -> None:
    """Make the store's aliases exactly ``aliases`` (at start-up, before any request)."""
    for harness in set(await store.aliases()) - set(aliases):
        await store.delete_alias(harness)
    for harness, model in aliases.items():
        await store.set_alias(harness, model)


class ModelAliases:
    """This process's view of the store's aliases; changes made here apply at once."""

    def __init__(
        self,
        store: Store,
        *,
        ttl: float = ALIAS_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._ttl = ttl
        self._clock = clock
        self._copy: dict[str, str] = {}
        self._fetched = -math.inf
        self._changes = 0
        self._refresh: asyncio.Future[None] | None = None
        self._pushed: bool | None = None
        """The store announces changes (``None``: not asked yet, no event loop before)."""

    async def current(self) -> Mapping[str, str]:
        """Every alias, as the store last announced them, or at most ``ttl`` seconds older
        than the store's when it announces nothing."""
        if self._pushed is None:
            self._pushed = self._store.watch_aliases(self._announced)
        stale = self._clock() - self._fetched >= self._ttl
        if self._fetched == -math.inf or (stale and not self._pushed):
            if self._refresh is None:
                self._refresh = asyncio.ensure_future(self._fetch())
            await asyncio.shield(self._refresh)
        return self._copy

    async def target(self, harness: str) -> str | None:
        """The model to ask for on ``harness``'s behalf, or ``None`` to pass its own."""
        return (await self.current()).get(harness)

    async def set(self, harness: str, model: str) -> None:
        await self._store.set_alias(harness, model)
        self._changed({**self._copy, harness: model})

    async def delete(self, harness: str) -> bool:
        deleted = await self._store.delete_alias(harness)
        self._changed({key: value for key, value in self._copy.items() if key != harness})
        return deleted

    def _announced(self) -> None:
        """Some instance changed an alias: the next request reads them again (a read in
        flight may predate the change, so it is dropped)."""
        self._changes += 1
        self._fetched = -math.inf

    def _changed(self, aliases: dict[str, str]) -> None:
        self._changes += 1
        self._copy = aliases

    async def _fetch(self) -> None:
        """One read shared by every request that found the copy stale; a read that raced a
        local change is dropped (the next request reads again)."""
        changes, started = self._changes, self._clock()
        try:
            aliases = await self._store.aliases()
        finally:
            self._refresh = None
        if changes == self._changes:
            self._copy, self._fetched = aliases, started
