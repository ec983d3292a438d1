"""Findings on every backend: a finding revealed later is stored once per session, however many
instances reveal it at the same moment; findings on a turn's own calls are all kept."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

from store_kit import OpenBackend

from safeagents.store import FindingRecord, SessionUpdate, TurnRecord

_REVEALED = FindingRecord(
    "no-delete-existing",
    "destroy",
    "high",
    "flag",
    "",
    "bash",
    "delete src/a.py (revealed later: src/a.py existed before the session)",
    "msg",
    revealed=True,
)


def _update() -> SessionUpdate:
    return SessionUpdate("s", "pi", "chat", "/workspace", "m", "root", hacked=True)


def _turn(exchange: str, *findings: FindingRecord) -> TurnRecord:
    return TurnRecord(
        "s", exchange, 0, "main", "ok", "chat", "pi", "m", False, None, None, findings=findings
    )


def test_instances_revealing_one_finding_at_once_store_it_once(
    open_backend: OpenBackend,
) -> None:
    """Eight stores on one file, each on its own thread and event loop (as many proxy
    instances), record the same revealed finding at the same moment, eight rounds over."""
    rounds, instances = 8, 8
    asyncio.run(open_backend("race").close())  # made once, before the threads open it
    barrier = threading.Barrier(instances)
    failures: list[BaseException] = []

    def instance(number: int) -> None:
        async def race() -> None:
            store = open_backend("race")
            try:
                for round_ in range(rounds):
                    found = replace(_REVEALED, summary=f"s{round_}")
                    await asyncio.to_thread(barrier.wait)
                    await store.record_exchange(_update(), [_turn(f"e{number}", found)])
            finally:
                await store.close()

        try:
            asyncio.run(race())
        except BaseException as exc:  # reported by the test thread
            failures.append(exc)

    threads = [threading.Thread(target=instance, args=(n,)) for n in range(instances)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []

    async def read() -> None:
        store = open_backend("race")
        turns = await store.turns("s")
        assert len(turns) == rounds * instances  # every turn lands
        stored = [f for turn in turns for f in turn.findings]
        assert sorted(f.summary for f in stored) == [f"s{n}" for n in range(rounds)]
        assert all(f.revealed for f in stored)
        session = await store.get_session("s")
        assert session is not None and session.hacked
        await store.close()

    asyncio.run(read())


def test_findings_on_a_turns_own_calls_may_repeat(open_backend: OpenBackend) -> None:
    async def scenario() -> None:
        store = open_backend("own")
        own = FindingRecord("r1", "c", "high", "reject", "call_0", "bash", "rm x", "m", True)
        await store.record_exchange(_update(), [_turn("e1", own), _turn("e2", own)])
        await store.record_exchange(_update(), [_turn("e3", _REVEALED, _REVEALED, own)])
        await store.record_exchange(_update(), [_turn("e4", _REVEALED)])
        findings = [(t.seq, f) for t in await store.turns("s") for f in t.findings]
        assert findings == [(1, own), (2, own), (3, _REVEALED), (3, own)]
        await store.close()

    asyncio.run(scenario())
