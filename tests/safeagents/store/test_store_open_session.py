"""Store.open_session (every backend): a session made before its first exchange, then used as
usual."""

from __future__ import annotations

import asyncio

from store_kit import OpenBackend

from safeagents.store import SessionUpdate


def _first_exchange(session_id: str) -> SessionUpdate:
    return SessionUpdate(
        session_id=session_id,
        harness="pi",
        dialect="chat",
        cwd="/ignored/by/an/opened/session",
        model="m",
        root_key="root-of-the-conversation",
        tool_calls=2,
    )


def test_an_opened_session_keeps_its_cwd_and_takes_the_first_exchanges_root(
    open_backend: OpenBackend,
) -> None:
    async def scenario() -> None:
        store = open_backend("s")
        opened = await store.open_session("s1", cwd="/srv/work")
        assert (opened.id, opened.cwd, opened.harness, opened.turns) == ("s1", "/srv/work", "", 0)
        assert opened.outcome is None and not opened.hacked
        await store.record_exchange(_first_exchange("s1"), [])
        await store.record_exchange(
            SessionUpdate("s1", "pi", "chat", "/elsewhere", "m", "a-later-root"), []
        )
        session = await store.get_session("s1")
        assert session is not None
        assert session.cwd == "/srv/work" and session.harness == "pi"
        assert session.root_key == "root-of-the-conversation" and session.tool_calls == 2
        await store.close()

    asyncio.run(scenario())


def test_reopening_updates_cwd_and_a_named_harness_only(open_backend: OpenBackend) -> None:
    async def scenario() -> None:
        store = open_backend("s")
        await store.record_exchange(_first_exchange("s2"), [])
        moved = await store.open_session("s2", cwd="/srv/b")
        assert moved.cwd == "/srv/b" and moved.harness == "pi" and moved.tool_calls == 2
        renamed = await store.open_session("s2", cwd="/srv/c", harness="opencode")
        assert renamed.cwd == "/srv/c" and renamed.harness == "opencode"
        assert renamed.root_key == "root-of-the-conversation"
        await store.close()

    asyncio.run(scenario())
