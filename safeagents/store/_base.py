"""The store interface: what the proxy, the admin API and the CLI need from a backend.

Every method is a coroutine so that a networked backend can implement it natively
(:class:`~safeagents.store.postgres.PostgresStore`, psycopg's async pool);
:class:`~safeagents.store.SQLiteStore` runs SQLite in one worker thread. Contract for
implementers:

- :meth:`record_exchange` is atomic: the session update, all turns with their findings
  and all hidden entries become visible together or not at all. Counters are applied as
  increments (``tool_calls = tool_calls + n``, ``hacked = hacked OR h``) so that several
  proxy processes may record into one session concurrently.
- Turn ``seq`` numbers are unique and increasing per session, assigned inside that
  transaction (PostgreSQL: the exchange first locks the session row, by its upsert).
- Hidden entries and findings are returned in insertion order.
- A missing outcome stays ``None``: "not scored", never 0.

Several proxy instances (processes, hosts) may share one store, and any of them may serve
any request of a session: they keep no session state of their own, so the store is
authoritative. A request reads the session with :meth:`live_state` and writes what it
changed with :meth:`record_exchange`; everything that write does is relative to what is
stored when it commits, never a value computed from the earlier read:

- counters are increments and flags only ever turn on (above);
- ``seq`` is the session's largest plus one, under the session's write lock;
- hidden entries are appended;
- the main line (``SessionUpdate.main``) is compared and set: it replaces the stored one
  only when that is still ``SessionUpdate.read_main`` (what the request read) or is no
  longer than ``main`` (SQL: ``WHERE main_count <= :count OR (main_count = :read_count
  AND main_key = :read_key)``), so of two turns of one session served at once by two
  instances, the shorter conversation never wins over the longer;
- each alias remembers who set it last: a proxy start's flags or the admin API (column
  ``model_aliases.origin``, ``'flags'`` or ``'admin'``; rows of a store older than schema 5
  are ``'flags'``), so that a restarted instance applies its ``--model-alias`` flags without
  wiping an alias set at run time (a trainer's published adapter): see
  :meth:`start_aliases`;
- a finding revealed later (``FindingRecord.revealed``: on a call that already ran, found by
  what a later request showed) is stored once per session, whichever instance reveals it
  first: a unique index on ``(session_id, rule_id, tool_call_id, summary) WHERE revealed``
  and an insert that skips a duplicate (``ON CONFLICT DO NOTHING``), in the exchange's
  transaction; other findings are not unique (a re-ask may reuse a call id);
- :attr:`LiveState.aliases_version <safeagents.store.LiveState.aliases_version>` changes
  whenever any instance changes the aliases (a ``meta`` row every alias change increments
  in its transaction, read with the session by :meth:`live_state`: one transaction on
  SQLite, one statement on PostgreSQL), so each request knows whether its process's copy of
  the aliases is current without reading them.

A finding is durable when :meth:`record_exchange` returns; the proxy ends no answer to a
harness before that (a stream's end waits for it), so the harness's next request, on any
instance, sees it.

The SQL schema (``safeagents/store/_schema.py``) uses only portable types (TEXT, INTEGER,
REAL; PostgreSQL gets DOUBLE PRECISION and identity columns); JSON documents are TEXT on both,
so that a request is stored byte for byte as the harness sent it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from safeagents.store._query import RuleCount, ServedModel, SessionQuery, SessionTotals
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
        """The session (or ``None`` if new), its hidden entries and the aliases' version, from
        one snapshot, for the request path (called once per model request: keep it cheap)."""

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
    async def query_sessions(
        self, query: SessionQuery, *, limit: int = 50, offset: int = 0
    ) -> list[SessionRecord]:
        """Sessions ``query`` matches, most recently updated first, with their findings and
        outcomes (the console's list: answers a page of 100,000 sessions in milliseconds)."""

    @abstractmethod
    async def session_totals(self, query: SessionQuery) -> SessionTotals:
        """Sessions, tool calls, blocked calls and re-asks over what ``query`` matches."""

    @abstractmethod
    async def rule_counts(self) -> dict[str, RuleCount]:
        """How often each rule that ever fired did, by rule id."""

    @abstractmethod
    async def served_models(self, *, recent: int = 100_000) -> list[ServedModel]:
        """The models that answered the last ``recent`` turns, with when and how often (the
        adapter versions a trainer published, as aliases routed harnesses to them)."""

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
        """The harness -> model aliases the proxy applies (shared by all its processes); read
        again by a process when :attr:`LiveState.aliases_version` changed."""

    @abstractmethod
    async def set_alias(self, harness: str, model: str) -> None:
        """Make requests of ``harness`` go to ``model`` (replacing an earlier alias), as set
        through the admin API (origin ``'admin'``, which a proxy start keeps: see
        :meth:`start_aliases`); changes ``aliases_version`` in the same transaction."""

    @abstractmethod
    async def start_aliases(self, flags: Mapping[str, str]) -> dict[str, str]:
        """A proxy start's ``--model-alias`` ``flags``, in one write transaction (instances
        may start at once; PostgreSQL: ``LOCK TABLE model_aliases IN SHARE ROW EXCLUSIVE
        MODE`` first, as absent rows cannot be locked): each alias ``flags`` names is set,
        with origin ``'flags'``, where its harness has none or one whose origin is
        ``'flags'``; an alias of origin ``'flags'`` that ``flags`` do not name is deleted; an
        alias of origin ``'admin'`` (:meth:`set_alias`) is kept until :meth:`delete_alias`
        drops it. Changes ``aliases_version`` only when an alias changed (a restart with the
        same flags makes no instance read the aliases again). Returns the kept admin
        aliases that differ from a flag (harness -> model), for the proxy to report."""

    @abstractmethod
    async def delete_alias(self, harness: str) -> bool:
        """Drop the alias of ``harness``; ``False`` if it had none (else changes
        ``aliases_version`` like :meth:`set_alias`)."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections and threads; the store is unusable afterwards."""
