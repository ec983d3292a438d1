"""Transcript storage: sessions, turns (with token ids), findings, hidden history, outcomes.

:class:`Store` is the interface (async, implementable on PostgreSQL); :class:`SQLiteStore`
is the default backend (one WAL file, safe for several proxy worker processes); the
``sqlite_`` functions run its list statements on a connection of one's own.
"""

from __future__ import annotations

from safeagents.store._base import Store
from safeagents.store._query import (
    OUTCOMES,
    OutcomeFilter,
    RuleCount,
    ServedModel,
    SessionQuery,
    SessionTotals,
)
from safeagents.store._records import (
    HACK_ACTIONS,
    FindingRecord,
    HiddenEntry,
    LiveState,
    SessionRecord,
    SessionUpdate,
    TokenRecord,
    TurnKind,
    TurnRecord,
    TurnStatus,
)
from safeagents.store._render import (
    content_text,
    outcome_summary,
    print_session,
    print_sessions,
    print_uncut,
)
from safeagents.store._sqlite import SQLiteStore
from safeagents.store._sqlite_query import (
    sqlite_query_sessions,
    sqlite_session_totals,
    sqlite_where,
)
from safeagents.store._transcript import export_line, to_chat_messages

__all__ = [
    "HACK_ACTIONS",
    "OUTCOMES",
    "FindingRecord",
    "HiddenEntry",
    "LiveState",
    "OutcomeFilter",
    "RuleCount",
    "SQLiteStore",
    "ServedModel",
    "SessionQuery",
    "SessionRecord",
    "SessionTotals",
    "SessionUpdate",
    "Store",
    "TokenRecord",
    "TurnKind",
    "TurnRecord",
    "TurnStatus",
    "content_text",
    "export_line",
    "outcome_summary",
    "print_session",
    "print_sessions",
    "print_uncut",
    "sqlite_query_sessions",
    "sqlite_session_totals",
    "sqlite_where",
    "to_chat_messages",
]
