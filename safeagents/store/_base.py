"""The store interface: what the proxy, the admin API and the CLI need from a backend.

Every method is a coroutine so that a networked backend can implement it natively
(:class:`~safeagents.store.postgres.PostgresStore`, psycopg's async pool);
:class:`~safeagents.store.SQLiteStore` runs SQLite in one worker thread. Contract for implementers:

- :meth:`record_exchange` is atomic: the session update, all turns with their findings
  and all hidden entries become visible together or not at all. Counters are applied as
  increments (``tool_calls = tool_calls + n``, ``hacked = hacked OR h``) so that several
  proxy processes may record into one session concurrently.
- Turn ``seq`` numbers are unique and increasing per session, assigned inside that
  transaction (PostgreSQL: the exchange first locks the session row, by its ``UPDATE``).
- Hidden entries and findings are returned in insertion order.
- A missing outcome stays ``None``: "not scored", never 0.

The SQL schema (``safeagents/store/_schema.py``) uses only portable types (TEXT, INTEGER,
REAL; PostgreSQL gets DOUBLE PRECISION and identity columns); JSON documents are TEXT on both,
so that a request is stored byte for byte as the harness sent it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from safeagents.store._records import (
    HiddenEntry,
    LiveState,
    SessionRecord,
    SessionUpdate,
    TurnRecord,
)

__all__ = ["Store"]


class Store(ABC):
    """Sessions, turns, findings, hidden history and outcomes of a proxy deployment."""

    @abstractmethod
    async def live_state(self, session_id: str) -> LiveState:
        """The session (or ``None`` if new) and its hidden entries, for the request path."""

    @abstractmethod
    async def record_exchange(
        self,
        update: SessionUpdate,
        turns: Sequence[TurnRecord],
        hidden: Sequence[HiddenEntry] = (),
        *,
        inline: bool = False,
    ) -> list[TurnRecord]:
        """Apply ``update``, store ``turns`` and ``hidden`` atomically; turns come back with
        their ``seq``. Creates the session on first use. ``inline``: the caller has nothing
        else to do meanwhile (no other request in flight), so a backend may do the write on
        the calling thread instead of handing it to another."""

    @abstractmethod
    async def open_session(
        self,
        session_id: str,
        *,
        cwd: str | None,
        harness: str = "",
        sampling: Mapping[str, Any] | None = None,
    ) -> SessionRecord:
        """Create the session before its first request, or update it when it exists: its
        ``cwd`` (paths of its calls resolve against it; ``None`` keeps it, ``/workspace`` for a
        new session), ``harness`` if given, and ``sampling`` (a training session's sampling
        parameters, which the proxy enforces) if given."""

    @abstractmethod
    async def list_sessions(self, *, limit: int = 100, offset: int = 0) -> list[SessionRecord]:
        """Sessions, most recently updated first, without their findings."""

    @abstractmethod
    async def get_session(self, session_id: str) -> SessionRecord | None:
        """One session with all its findings, or ``None``."""

    @abstractmethod
    async def turns(self, session_id: str) -> list[TurnRecord]:
        """Every turn of a session in ``seq`` order, with findings."""

    @abstractmethod
    async def set_outcome(
        self, session_id: str, outcome: Mapping[str, Any]
    ) -> SessionRecord | None:
        """Store the verifier's result (replacing an earlier one); ``None`` if no session."""

    @abstractmethod
    async def aliases(self) -> dict[str, str]:
        """The harness -> model aliases the proxy applies (shared by all its processes)."""

    @abstractmethod
    async def set_alias(self, harness: str, model: str) -> None:
        """Make requests of ``harness`` go to ``model`` (replacing an earlier alias)."""

    @abstractmethod
    async def delete_alias(self, harness: str) -> bool:
        """Drop the alias of ``harness``; ``False`` if it had none."""

    def watch_aliases(self, changed: Callable[[], None]) -> bool:
        """Call ``changed`` (on the running event loop) whenever any process or instance may
        have changed an alias; ``False`` when the backend cannot tell (the caller re-reads
        :meth:`aliases` from time to time instead). PostgreSQL: ``LISTEN``/``NOTIFY``."""
        return False

    @abstractmethod
    async def close(self) -> None:
        """Release connections and threads; the store is unusable afterwards."""
