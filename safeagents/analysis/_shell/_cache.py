"""A small LRU of shell analysis results: fixtures, re-asks and retries repeat the same calls."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

from safeagents._actions import Effect

CACHEABLE_LENGTH = 4_096
"""Longest script whose effects are kept; longer ones are rarely repeated and cost memory."""
MAX_ENTRY_WEIGHT = 65_536
"""Most characters of effect text one entry may hold, so the cache stays a few megabytes."""


class ResultCache:
    """Least-recently-used map from (script, context, level) to the effects found; thread-safe.

    Effects are immutable, so entries are shared; callers get a fresh list each time.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        """Entries kept; 0 turns the cache off."""
        self._entries: OrderedDict[Hashable, tuple[Effect, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> list[Effect] | None:
        with self._lock:
            try:
                found = self._entries.get(key)
            except TypeError:
                return None
            if found is None:
                return None
            self._entries.move_to_end(key)
        return list(found)

    def put(self, key: Hashable, effects: Sequence[Effect]) -> None:
        if self.size <= 0 or _weight(effects) > MAX_ENTRY_WEIGHT:
            return
        with self._lock:
            try:
                self._entries[key] = tuple(effects)
            except TypeError:
                return
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def _weight(effects: Sequence[Effect]) -> int:
    """Characters of text the effects hold (all their string fields and argv)."""
    total = 0
    for effect in effects:
        total += (
            len(effect.path or "")
            + len(effect.dest or "")
            + len(effect.content or "")
            + len(effect.added or "")
            + len(effect.removed or "")
            + len(effect.argv0 or "")
            + len(effect.command or "")
            + len(effect.url or "")
            + len(effect.host or "")
            + len(effect.pattern or "")
        )
        for arg in effect.argv:
            total += len(arg)
        if total > MAX_ENTRY_WEIGHT:
            break
    return total


RESULTS = ResultCache()
"""The cache :func:`safeagents.analysis._shell.analyze_shell` uses."""
