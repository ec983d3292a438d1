"""The SQL schema: portable column types, one statement per table or index."""

from __future__ import annotations

__all__ = ["ADDED_COLUMNS", "ALIASES_VERSION_KEY", "LATE_INDEXES", "SCHEMA", "SCHEMA_VERSION"]

SCHEMA_VERSION = 5

ALIASES_VERSION_KEY = "aliases_version"
"""The ``meta`` row counting the changes ever made to the model aliases (absent: none)."""


SCHEMA: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY,
        harness TEXT NOT NULL,
        dialect TEXT NOT NULL DEFAULT '',
        cwd TEXT NOT NULL DEFAULT '/workspace',
        model TEXT NOT NULL DEFAULT '',
        sampling TEXT,
        created REAL NOT NULL,
        updated REAL NOT NULL,
        hacked INTEGER NOT NULL DEFAULT 0,
        tool_calls INTEGER NOT NULL DEFAULT 0,
        turns INTEGER NOT NULL DEFAULT 0,
        stopped INTEGER NOT NULL DEFAULT 0,
        root_key TEXT NOT NULL DEFAULT '',
        main_count INTEGER NOT NULL DEFAULT -1,
        main_key TEXT NOT NULL DEFAULT ''
    )""",
    """CREATE TABLE IF NOT EXISTS turns (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        exchange TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        dialect TEXT NOT NULL,
        harness TEXT NOT NULL,
        model TEXT NOT NULL,
        requested_model TEXT NOT NULL DEFAULT '',
        stream INTEGER NOT NULL,
        request TEXT,
        response TEXT,
        delivered TEXT,
        usage TEXT,
        tokens TEXT,
        error TEXT,
        started REAL NOT NULL,
        ended REAL NOT NULL,
        UNIQUE (session_id, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS findings (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        turn_id INTEGER NOT NULL REFERENCES turns(id),
        rule_id TEXT NOT NULL,
        category TEXT NOT NULL,
        severity TEXT NOT NULL,
        action TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        summary TEXT NOT NULL,
        message TEXT NOT NULL,
        blocked INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS hidden (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        dialect TEXT NOT NULL,
        kind TEXT NOT NULL,
        at INTEGER NOT NULL,
        anchor TEXT NOT NULL,
        call_id TEXT NOT NULL DEFAULT '',
        items TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS outcomes (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        posted REAL NOT NULL,
        outcome TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS model_aliases (
        harness TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        updated REAL NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS turns_by_session ON turns (session_id, seq)",
    "CREATE INDEX IF NOT EXISTS findings_by_session ON findings (session_id, id)",
    "CREATE INDEX IF NOT EXISTS hidden_by_session ON hidden (session_id, id)",
    "DROP INDEX IF EXISTS sessions_by_update",  # sessions_for_console (LATE_INDEXES) serves
    "CREATE INDEX IF NOT EXISTS findings_by_rule ON findings (rule_id, session_id)",  # console
)

ADDED_COLUMNS: tuple[tuple[int, str, str, str], ...] = (
    (2, "turns", "requested_model", "TEXT NOT NULL DEFAULT ''"),
    (3, "sessions", "sampling", "TEXT"),
    (4, "sessions", "blocked_calls", "INTEGER NOT NULL DEFAULT 0"),
    (4, "sessions", "reasks", "INTEGER NOT NULL DEFAULT 0"),
    (4, "sessions", "success", "INTEGER"),
    (5, "findings", "revealed", "INTEGER NOT NULL DEFAULT 0"),
    (5, "model_aliases", "origin", "TEXT NOT NULL DEFAULT 'flags'"),
)
"""``(version, table, column, type)`` of every column added after a table was first created:
a store written by an older version gets them on open."""

LATE_INDEXES: tuple[str, ...] = (
    "CREATE INDEX IF NOT EXISTS sessions_for_console ON sessions "
    "(updated, hacked, harness, success, tool_calls, blocked_calls, reasks, id)",
    "CREATE UNIQUE INDEX IF NOT EXISTS findings_revealed_once ON findings "
    "(session_id, rule_id, tool_call_id, summary) WHERE revealed = 1",
)
"""Indexes on added columns, created once a store has them (after the upgrade). Sessions by
last update, and everything the console's list filters on and totals (safeagents/console), so
its pages and counts over 100,000 sessions read this index alone. A revealed finding once per
session (the writer's ``ON CONFLICT DO NOTHING`` drops the copy a second instance revealed
at the same moment); findings found on a turn's own calls may repeat (a re-ask can reuse a
call id) and are not constrained."""
