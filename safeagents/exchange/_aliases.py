"""Per-harness model aliases: which model the upstream is asked for on a harness's behalf.

The aliases live in the store, so every process and every instance sharing it applies the
same ones. Each process keeps a copy, checked on every request against the version the
store returned with the session (:attr:`LiveState.aliases_version`): a change made anywhere
applies from the next request on, and an unchanged version costs no read.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from safeagents._registry import Registry
from safeagents.store import Store

__all__ = ["ModelAliases", "canonical_aliases", "start_aliases"]

logger = logging.getLogger("safeagents.proxy")


def canonical_aliases(registry: Registry, aliases: Mapping[str, str]) -> dict[str, str]:
    """``aliases`` keyed by the harnesses' registered names; :class:`ValueError` for a
    harness no plugin provides."""
    return {registry.harness(harness).name: model for harness, model in aliases.items()}


async def start_aliases(store: Store, aliases: Mapping[str, str]) -> None:
    """Apply a start's ``--model-alias`` flags ``aliases`` (before any request): they replace
    the aliases earlier flags set, never one set through the admin API at run time, which is
    reported where a flag differs (see :meth:`Store.start_aliases`)."""
    kept = await store.start_aliases(aliases)
    for harness, model in sorted(kept.items()):
        logger.warning(
            "--model-alias %s=%s not applied: the alias %s=%s was set through the admin API "
            "(DELETE /safeagents/v1/aliases/%s, then restart, to return to the flag)",
            harness,
            aliases[harness],
            harness,
            model,
            harness,
        )


class ModelAliases:
    """This process's copy of the store's aliases; changes made here apply at once."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._copy: dict[str, str] = {}
        self._version: int | None = None
        """The store's version the copy is at least as new as (``None``: none yet)."""
        self._changes = 0
        self._refresh: tuple[int, asyncio.Future[None]] | None = None

    async def current(self) -> Mapping[str, str]:
        """Every alias, read from the store now (the admin API's view)."""
        return await self._store.aliases()

    async def target(self, harness: str, version: int) -> str | None:
        """The model to ask for on ``harness``'s behalf, or ``None`` to pass its own;
        ``version``: the store's ``aliases_version`` read with the request's session."""
        if version != self._version:
            await self._refreshed(version)
        return self._copy.get(harness)

    async def set(self, harness: str, model: str) -> None:
        await self._store.set_alias(harness, model)
        self._changed({**self._copy, harness: model})

    async def delete(self, harness: str) -> bool:
        deleted = await self._store.delete_alias(harness)
        self._changed({key: value for key, value in self._copy.items() if key != harness})
        return deleted

    def _changed(self, aliases: dict[str, str]) -> None:
        self._changes += 1
        self._copy = aliases

    async def _refreshed(self, version: int) -> None:
        """One read shared by every request that saw ``version``."""
        if self._refresh is None or self._refresh[0] != version:
            self._refresh = (version, asyncio.ensure_future(self._fetch(version)))
        await asyncio.shield(self._refresh[1])

    async def _fetch(self, version: int) -> None:
        """Read the aliases, which are at least as new as ``version``; a read that raced a
        local change is dropped (the next request reads again)."""
        changes = self._changes
        try:
            aliases = await self._store.aliases()
        finally:
            if self._refresh is not None and self._refresh[0] == version:
                self._refresh = None
        if changes == self._changes:
            self._copy, self._version = aliases, version
