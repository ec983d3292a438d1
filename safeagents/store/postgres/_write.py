"""PostgreSQL writes. Each runs in the caller's transaction; :func:`record` locks the session's
row first, so exchanges of one session recorded by several proxy instances at once take their
turns one after the other (sequence numbers, counters and hidden entries never collide)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from safeagents.store._alias_start import ADMIN, FLAGS, plan_start
from safeagents.store._records import HiddenEntry, SessionUpdate, TurnRecord
from safeagents.store._rows import (
    FINDING_COLUMNS,
    HIDDEN_COLUMNS,
    TURN_DATA_COLUMNS,
    dumps,
    escape_surrogates,
    finding_values,
    hidden_values,
    turn_values,
)
from safeagents.store._schema import ALIASES_VERSION_KEY
from safeagents.store.postgres._read import Connection, Cursor
from safeagents.store.postgres._schema import SUCCESS

__all__ = [
    "bump_aliases_version",
    "clean",
    "delete_alias",
    "open_session",
    "record",
    "set_alias",
    "set_outcome",
    "start_aliases",
]

_MAIN_MOVES = (
    "(%s AND (%s OR s.main_count <= excluded.main_count "
    "OR (s.main_count = %s AND s.main_key = %s)))"
)
"""Whether an exchange's main line replaces the stored one: it has one, and it was read
unconditionally, or it is at least as long, or the stored one is still what it read."""
_LAST_TURN = "currval(pg_get_serial_sequence('turns', 'id'))"
"""The id of the turn this connection inserted last."""


def clean(params: Sequence[Any]) -> tuple[Any, ...]:
    """``params`` with NUL characters (which PostgreSQL text cannot hold, and a tool call
    may carry) replaced by U+FFFD, JSON text never has one (``json`` escapes it), and lone
    surrogates (which UTF-8 cannot encode) escaped (:func:`escape_surrogates`)."""
    return tuple(
        escape_surrogates(
            value.replace("\x00", "\ufffd") if isinstance(value, str) and "\x00" in value else value
        )
        for value in params
    )


async def record(
    conn: Connection,
    update: SessionUpdate,
    turns: Sequence[TurnRecord],
    hidden: Sequence[HiddenEntry],
) -> list[Cursor]:
    """Queue the statements of one exchange in the caller's transaction (in pipeline mode:
    nothing is read back before the commit, so an exchange costs one round trip). Returns a
    cursor per turn whose one row, once committed, holds the turn's ``seq``."""
    now = time.time()
    main_count, main_key = update.main if update.main is not None else (-1, "")
    read_count, read_key = update.read_main if update.read_main is not None else (-1, "")
    moves = (update.main is not None, update.read_main is None, read_count, read_key)
    await conn.execute(
        # The row lock this takes is held to the commit: a concurrent exchange of the session
        # waits here; the statements after it (a fresh snapshot each) see what that one wrote.
        "INSERT INTO sessions AS s (id, harness, dialect, cwd, model, created, updated, "
        "root_key, tool_calls, turns, hacked, stopped, main_count, main_key, blocked_calls, "
        "reasks) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (id) DO UPDATE SET updated = excluded.updated, model = excluded.model, "
        "dialect = excluded.dialect, tool_calls = s.tool_calls + excluded.tool_calls, "
        "turns = s.turns + excluded.turns, hacked = GREATEST(s.hacked, excluded.hacked), "
        "stopped = GREATEST(s.stopped, excluded.stopped), "
        "blocked_calls = s.blocked_calls + excluded.blocked_calls, "
        "reasks = s.reasks + excluded.reasks, "
        "harness = CASE WHEN excluded.harness <> 'generic' OR s.harness = '' "
        "THEN excluded.harness ELSE s.harness END, "
        "root_key = CASE WHEN s.root_key = '' THEN excluded.root_key ELSE s.root_key END, "
        # The main line is compared and set (see Store): the stored one is replaced when the
        # exchange moved it and nobody else did since, or when it grows.
        f"main_count = CASE WHEN {_MAIN_MOVES} THEN excluded.main_count ELSE s.main_count END, "
        f"main_key = CASE WHEN {_MAIN_MOVES} THEN excluded.main_key ELSE s.main_key END",
        clean(
            (
                update.session_id,
                update.harness,
                update.dialect,
                update.cwd,
                update.model,
                now,
                now,
                update.root_key,
                update.tool_calls,
                len(turns),
                int(update.hacked),
                int(update.stopped),
                main_count,
                main_key,
                len({f.tool_call_id for turn in turns for f in turn.findings if f.blocked}),
                sum(turn.kind == "reask" for turn in turns),
                *moves,
                *moves,
            )
        ),
    )
    numbered: list[Cursor] = []
    for turn in turns:
        numbered.append(await _insert_turn(conn, turn))
        if turn.findings:
            async with conn.cursor() as many:
                await many.executemany(
                    # a revealed finding the session already holds is not stored again
                    f"INSERT INTO findings (session_id, turn_id, {FINDING_COLUMNS}) "
                    f"VALUES (%s, {_LAST_TURN}, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    [clean((turn.session_id, *finding_values(f))) for f in turn.findings],
                )
    if hidden:
        async with conn.cursor() as many:
            await many.executemany(
                f"INSERT INTO hidden (session_id, {HIDDEN_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [clean(hidden_values(update.session_id, entry)) for entry in hidden],
            )
    return numbered


async def _insert_turn(conn: Connection, turn: TurnRecord) -> Cursor:
    return await conn.execute(
        f"INSERT INTO turns (seq, {TURN_DATA_COLUMNS}) VALUES "
        "((SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE session_id = %s), "
        "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "RETURNING seq",
        clean((turn.session_id, *turn_values(turn))),
    )


async def open_session(
    conn: Connection,
    session_id: str,
    cwd: str | None,
    harness: str,
    sampling: Mapping[str, Any] | None,
) -> None:
    now = time.time()
    settings = dumps(dict(sampling)) if sampling is not None else None
    await conn.execute(
        "INSERT INTO sessions (id, harness, cwd, created, updated, sampling) "
        "VALUES (%s, %s, COALESCE(%s, '/workspace'), %s, %s, %s) "
        "ON CONFLICT (id) DO UPDATE SET updated = excluded.updated, "
        "cwd = CASE WHEN %s::text IS NULL THEN sessions.cwd ELSE excluded.cwd END, "
        "harness = CASE WHEN excluded.harness = '' THEN sessions.harness "
        "ELSE excluded.harness END, "
        "sampling = COALESCE(excluded.sampling, sessions.sampling)",
        clean((session_id, harness, cwd, now, now, settings, cwd)),
    )


async def set_outcome(conn: Connection, session_id: str, outcome: Mapping[str, Any]) -> bool:
    """``False`` when there is no such session."""
    cursor = await conn.execute(
        "INSERT INTO outcomes (session_id, posted, outcome) "
        "SELECT id, %s, %s FROM sessions WHERE id = %s "
        "ON CONFLICT (session_id) DO UPDATE SET posted = excluded.posted, "
        "outcome = excluded.outcome",
        clean((time.time(), escape_surrogates(dumps(dict(outcome)), lossy=True), session_id)),
    )
    if cursor.rowcount == 0:
        return False
    await conn.execute(
        f"UPDATE sessions SET success = (SELECT {SUCCESS} FROM outcomes WHERE session_id = %s) "
        "WHERE id = %s",
        clean((session_id, session_id)),
    )
    return True


async def set_alias(conn: Connection, harness: str, model: str) -> None:
    await _upsert_alias(conn, harness, model, ADMIN)
    await bump_aliases_version(conn)


async def start_aliases(conn: Connection, flags: Mapping[str, str]) -> dict[str, str]:
    """A start's flags (see :meth:`Store.start_aliases`), in the caller's transaction: the
    table lock keeps a concurrent start or admin change from interleaving with it."""
    await conn.execute("LOCK TABLE model_aliases IN SHARE ROW EXCLUSIVE MODE")
    cursor = await conn.execute("SELECT harness, model, origin FROM model_aliases")
    plan = plan_start({str(h): (str(m), str(o)) for h, m, o in await cursor.fetchall()}, flags)
    if plan.delete:
        await conn.execute("DELETE FROM model_aliases WHERE harness = ANY(%s)", (plan.delete,))
    for harness, model in plan.set.items():
        await _upsert_alias(conn, harness, model, FLAGS)
    if plan.changes:
        await bump_aliases_version(conn)
    return plan.kept


async def _upsert_alias(conn: Connection, harness: str, model: str, origin: str) -> None:
    await conn.execute(
        "INSERT INTO model_aliases (harness, model, updated, origin) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (harness) DO UPDATE SET model = excluded.model, "
        "updated = excluded.updated, origin = excluded.origin",
        clean((harness, model, time.time(), origin)),
    )


async def delete_alias(conn: Connection, harness: str) -> bool:
    cursor = await conn.execute("DELETE FROM model_aliases WHERE harness = %s", clean((harness,)))
    if cursor.rowcount == 0:
        return False
    await bump_aliases_version(conn)
    return True


async def bump_aliases_version(conn: Connection) -> None:
    """In the transaction of an alias change: every instance's next ``live_state`` sees it."""
    await conn.execute(
        "INSERT INTO meta (key, value) VALUES (%s, '1') "
        "ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text",
        (ALIASES_VERSION_KEY,),
    )
