"""A small thread-safe LRU cache keyed by object identity (for unhashable or large keys)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["IdentityCache"]

_K = TypeVar("_K")
_V = TypeVar("_V")


class IdentityCache(Generic[_K, _V]):
    """``compute(key)`` once per key object while it is among the ``size`` latest asked.

    The entry keeps its key alive, so an ``id`` is never reused for another object while
    cached.
    """

    def __init__(self, compute: Callable[[_K], _V], size: int) -> None:
        self._compute = compute
        self.size = size
        self._entries: OrderedDict[int, tuple[_K, _V]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, key: _K) -> _V:
        with self._lock:
            entry = self._entries.get(id(key))
            if entry is not None and entry[0] is key:
                self._entries.move_to_end(id(key))
                return entry[1]
        value = self._compute(key)
        with self._lock:
            self._entries[id(key)] = (key, value)
            self._entries.move_to_end(id(key))
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._entries)
