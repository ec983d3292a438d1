"""The sessions list's live feed: one server-sent-event stream per open list.

The server asks the store, once a second, for the sessions updated since the last answer
(an index lookup on ``updated``, under the page's filters); the browser keeps one connection
and never polls. Several proxy workers write one store, so the store is what is watched.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace

from starlette.requests import Request

from safeagents.plugins import ServerStopping
from safeagents.protocols import encode_json
from safeagents.store import SessionQuery, SessionRecord, SessionTotals, Store

__all__ = ["INTERVAL", "session_events"]

INTERVAL = 1.0
_KEEPALIVE = 15.0
_BATCH = 50
_RESUME_WINDOW = 3600.0


def _resume_from(request: Request, now: float) -> float:
    """Where a reconnecting browser left off (``Last-Event-ID``: the update time of the last
    session it got), so no update is lost across a dropped connection; else now."""
    try:
        last = float(request.headers.get("last-event-id", ""))
    except ValueError:
        return now
    return last if now - _RESUME_WINDOW <= last <= now else now


async def session_events(
    request: Request,
    store: Store,
    query: SessionQuery,
    row: Callable[[SessionRecord], str],
    totals: Callable[[SessionTotals], dict[str, int]],
    *,
    interval: float = INTERVAL,
) -> AsyncIterator[bytes]:
    """``session`` events (the rendered row of each session updated, oldest first) and a
    ``totals`` event after them, until the client goes away or the server stops."""
    stopping = ServerStopping.of(request.scope)
    since = _resume_from(request, time.time())
    sent: set[tuple[str, float]] = set()
    """What was sent at ``since`` exactly (``updated >= since`` finds it again)."""
    quiet = 0.0
    yield b"retry: 2000\n\n"
    while not await request.is_disconnected():
        if await stopping.wait(interval):
            return
        floor = query.since if query.since is not None and query.since > since else since
        found = await store.query_sessions(replace(query, since=floor), limit=_BATCH)
        changed = [s for s in found if (s.id, s.updated) not in sent]
        if changed:
            since = max(session.updated for session in changed)
            sent = {(s.id, s.updated) for s in found if s.updated == since}
            for session in reversed(changed):
                data = {"id": session.id, "html": row(session)}
                yield encode_json(data, "session", repr(session.updated))
            yield encode_json(totals(await store.session_totals(query)), "totals")
            quiet = 0.0
            continue
        quiet += interval
        if quiet >= _KEEPALIVE:
            quiet = 0.0
            yield b": keep-alive\n\n"
