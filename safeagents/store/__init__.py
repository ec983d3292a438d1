"""Transcript storage: sessions, turns (with token ids), findings, hidden history, outcomes.

:class:`Store` is the interface (async); :class:`SQLiteStore` is the default backend (one WAL
file, safe for several proxy worker processes), :mod:`safeagents.store.postgres` the one many
proxy instances share. :func:`open_store` opens either from a path or URL. The ``sqlite_``
functions run the SQLite list statements on a connection of one's own.
"""

from __future__ import annotations

from safeagents.store._base import Store
from safeagents.store._copy import CopyError, CopyReport, copy_store
from safeagents.store._errors import NewerSchemaError, StoreConnectionError, StoreError
from safeagents.store._open import (
    check_store,
    default_store,
    is_postgres,
    open_store,
    redacted,
    sqlite_path,
)
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
    "CopyError",
    "CopyReport",
    "FindingRecord",
    "HiddenEntry",
    "LiveState",
    "NewerSchemaError",
    "OutcomeFilter",
    "RuleCount",
    "SQLiteStore",
    "ServedModel",
    "SessionQuery",
    "SessionRecord",
    "SessionTotals",
    "SessionUpdate",
    "Store",
    "StoreConnectionError",
    "StoreError",
    "TokenRecord",
    "TurnKind",
    "TurnRecord",
    "TurnStatus",
    "check_store",
    "content_text",
    "copy_store",
    "default_store",
    "export_line",
    "is_postgres",
    "open_store",
    "outcome_summary",
    "print_session",
    "print_sessions",
    "print_uncut",
    "redacted",
    "sqlite_path",
    "sqlite_query_sessions",
    "sqlite_session_totals",
    "sqlite_where",
    "to_chat_messages",
]
