"""The Store contract on every backend: atomic exchanges, per-session sequence numbers, several
writers (processes, instances) on one store, outcomes."""

from __future__ import annotations

import asyncio

import pytest
from store_kit import OpenBackend, make_turn, make_update

from safeagents.store import (
    FindingRecord,
    HiddenEntry,
    SessionUpdate,
    SQLiteStore,
    Store,
    TokenRecord,
    TurnRecord,
)


def _update(session_id: str, **changes: object) -> SessionUpdate:
    return make_update(session_id, **{"tool_calls": 0, **changes})


def _turn(session_id: str, action: str = "", **changes: object) -> TurnRecord:
    findings = ()
    if action:
        findings = (
            FindingRecord("r1", "c", "high", action, "call_1", "bash", "delete x", "msg", True),
        )
    request = {"messages": [{"role": "user", "content": "héllo"}]}
    fields = {"findings": findings, "request": request, "started": 1.0, "ended": 2.5}
    return make_turn(session_id, "e", **{**fields, **changes})


def test_an_exchange_is_stored_whole_and_read_back(open_backend: OpenBackend) -> None:
    async def scenario() -> None:
        store = open_backend("s")
        tokens = TokenRecord((1, 2), (3,), (-0.5,))
        pair = HiddenEntry("chat", "pair", 2, "anchor", ({"role": "assistant"},))
        restore = HiddenEntry("chat", "restore", 2, "anchor", ({"id": "c"},), call_id="c")
        stored = await store.record_exchange(
            _update("s", tool_calls=2, hacked=True, main=(2, "k2")),
            [_turn("s", "reject", tokens=tokens), _turn("s", attempt=1, kind="reask")],
            [pair, restore],
        )
        assert [turn.seq for turn in stored] == [1, 2]
        live = await store.live_state("s")
        assert live.session is not None and live.hidden == (pair, restore)
        assert (live.session.main_count, live.session.main_key) == (2, "k2")
        session = await store.get_session("s")
        assert session is not None and session.hacked and session.tool_calls == 2
        assert session.turns == 2 and [f.rule_id for f in session.findings] == ["r1"]
        turns = await store.turns("s")
        assert turns[0].tokens == tokens and turns[0].request == _turn("s").request
        assert turns[0].findings[0].blocked and turns[1].findings == ()
        assert turns[0].duration == 1.5
        assert (await store.live_state("nobody")).session is None
        await store.close()

    asyncio.run(scenario())


def test_counters_accumulate_and_hacked_never_resets(open_backend: OpenBackend) -> None:
    async def scenario() -> None:
        store = open_backend("s")
        await store.record_exchange(_update("s", tool_calls=1, hacked=True), [_turn("s", "flag")])
        await store.record_exchange(_update("s", tool_calls=3, hacked=False), [_turn("s")])
        await store.record_exchange(_update("s", harness="generic"), [_turn("s")])
        session = await store.get_session("s")
        assert session is not None
        assert (session.tool_calls, session.hacked, session.turns) == (4, True, 3)
        assert session.harness == "pi"  # a side call's generic guess never overwrites it
        assert session.report_json() == {
            "id": "s",
            "harness": "pi",
            "hacked": True,
            "tool_calls": 4,
            "unanalysable_calls": 0,
            "findings": [session.findings[0].to_json()],
        }
        await store.close()

    asyncio.run(scenario())


def test_lone_surrogates_are_stored_escaped_and_json_reads_back_whole(
    open_backend: OpenBackend,
) -> None:
    # json.loads('"\\ud800"') is a str UTF-8 cannot encode; a model may send one
    async def scenario() -> None:
        store = open_backend("s")
        odd = "echo '\ud800'"
        request = {"messages": [{"role": "user", "content": odd}]}
        response = {"choices": [{"message": {"content": odd}}]}
        hidden = HiddenEntry("chat", "pair", 2, "anchor", ({"content": odd},))
        turn = _turn("s", request=request, response=response, error=odd)
        await store.record_exchange(_update("s", model=odd), [turn], [hidden])
        (stored,) = await store.turns("s")
        assert stored.request == request and stored.response == response
        assert stored.error == "echo '\\ud800'"  # plain text keeps the escape
        assert (await store.live_state("s")).hidden == (hidden,)
        assert await store.set_outcome("s", {"note": odd}) is not None
        session = await store.get_session("s")
        # PostgreSQL parses outcomes as JSON, which refuses the escape: a U+FFFD there
        kept = odd if isinstance(store, SQLiteStore) else "echo '\ufffd'"
        assert session is not None and session.outcome == {"note": kept}
        await store.close()

    asyncio.run(scenario())


def test_outcomes_replace_and_missing_means_not_scored(open_backend: OpenBackend) -> None:
    async def scenario() -> None:
        store = open_backend("s")
        assert await store.set_outcome("ghost", {"success": True}) is None
        await store.record_exchange(_update("s"), [_turn("s")])
        session = await store.get_session("s")
        assert session is not None and session.outcome is None and not session.scored
        assert session.to_json()["scored"] is False
        await store.set_outcome("s", {"success": False, "reward": 0.0})
        updated = await store.set_outcome("s", {"success": True, "reward": 1.0})
        assert updated is not None and updated.outcome == {"success": True, "reward": 1.0}
        (listed,) = await store.list_sessions()
        assert listed.outcome == {"success": True, "reward": 1.0}
        await store.close()

    asyncio.run(scenario())


def test_two_stores_on_one_file_write_concurrently(open_backend: OpenBackend) -> None:
    """Two store objects stand for two worker processes or instances: separate connections."""

    async def scenario() -> None:
        first, second = open_backend("shared"), open_backend("shared")

        async def writer(store: Store, count: int) -> None:
            for _ in range(count):
                await store.record_exchange(_update("s", tool_calls=1), [_turn("s")])

        await asyncio.gather(writer(first, 40), writer(second, 40))
        turns = await first.turns("s")
        assert [turn.seq for turn in turns] == list(range(1, 81))
        session = await second.get_session("s")
        assert session is not None and session.tool_calls == 80 and session.turns == 80
        await first.close()
        await second.close()

    asyncio.run(scenario())


def test_a_closed_store_refuses_work(open_backend: OpenBackend) -> None:
    async def scenario() -> None:
        store = open_backend("s")
        await store.close()
        await store.close()
        with pytest.raises(RuntimeError, match="closed"):
            await store.list_sessions()

    asyncio.run(scenario())


def test_the_main_line_is_compared_and_set_against_what_the_request_read(
    open_backend: OpenBackend,
) -> None:
    """Two turns of one session served at once (each read main line (2, "k2")): the longer
    conversation keeps the main line whichever commits last; a turn that read the stored
    main line may shorten it (compaction)."""

    async def scenario() -> None:
        first, second = open_backend("main"), open_backend("main")

        async def main_line() -> tuple[int, str]:
            session = (await first.live_state("s")).session
            assert session is not None
            return session.main_count, session.main_key

        new = (-1, "")
        await first.record_exchange(_update("s", main=(2, "k2"), read_main=new), [_turn("s")])
        read = await main_line()
        assert read == (2, "k2")
        await second.record_exchange(_update("s", main=(6, "k6"), read_main=read), [_turn("s")])
        await first.record_exchange(_update("s", main=(4, "k4"), read_main=read), [_turn("s")])
        assert await main_line() == (6, "k6")
        await first.record_exchange(_update("s", main=(6, "k6b"), read_main=read), [_turn("s")])
        assert await main_line() == (6, "k6b")  # as long: a retried or branched turn wins
        await second.record_exchange(
            _update("s", main=(3, "c3"), read_main=(6, "k6b")), [_turn("s")]
        )
        assert await main_line() == (3, "c3")  # compacted from what it read
        await first.record_exchange(_update("s", main=(1, "u1")), [_turn("s")])
        assert await main_line() == (1, "u1")  # no read_main: set as told
        assert [t.seq for t in await first.turns("s")] == [1, 2, 3, 4, 5, 6]
        await first.close()
        await second.close()

    asyncio.run(scenario())
