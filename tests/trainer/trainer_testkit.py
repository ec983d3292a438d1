"""Recorded transcripts for the trainer tests, written into a real store (SQLite unless a
test gives another)."""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path
from typing import Any

from safeagents.plugins import hookimpl
from safeagents.store import (
    FindingRecord,
    SessionRecord,
    SessionUpdate,
    SQLiteStore,
    Store,
    TokenRecord,
    TurnKind,
    TurnRecord,
    TurnStatus,
)
from trainer import RewardFunction, default_reward
from trainer._reward import task_id_of
from trainer._rollouts import Rollout, TaskOf, read_rollout


def logprob_of(token: int) -> float:
    """The behaviour logprob the tests give ``token``, so alignment can be checked."""
    return -token / 1000


def turn(
    session_id: str,
    prompt: Sequence[int],
    completion: Sequence[int],
    *,
    kind: TurnKind = "main",
    status: TurnStatus = "ok",
    model: str = "opencode-v1",
    exchange: str = "e1",
    attempt: int = 0,
    logprobs: Sequence[float] | None = None,
    tokens: bool = True,
    blocked: bool = False,
    seq: int = 0,
) -> TurnRecord:
    """A turn with the engine's token ids; ``blocked`` adds a rejecting finding."""
    findings: tuple[FindingRecord, ...] = ()
    if blocked:
        findings = (
            FindingRecord(
                "test-file-tampering",
                "test-tampering",
                "critical",
                "reject",
                "call_1",
                "bash",
                "delete tests/test_x.py",
                "Blocked",
                blocked=True,
            ),
        )
    captured = None
    if tokens:
        captured = TokenRecord(
            tuple(prompt),
            tuple(completion),
            tuple(logprobs) if logprobs is not None else tuple(map(logprob_of, completion)),
        )
    return TurnRecord(
        session_id=session_id,
        exchange=exchange,
        attempt=attempt,
        kind=kind,
        status=status,
        dialect="chat",
        harness="opencode",
        model=model,
        stream=False,
        request={"messages": [{"role": "user", "content": "fix the bug"}]},
        response={"choices": []},
        delivered=None if blocked else {"choices": []},
        findings=findings,
        tokens=captured,
        started=1.0,
        ended=2.0,
        seq=seq,
    )


class Transcripts:
    """A SQLite store in a temporary directory (or the given ``store``), driven synchronously
    on one event loop of its own, as the trainer drives its store (a PostgresStore's pool
    serves the loop it was opened on)."""

    def __init__(self, path: Path, store: Store | None = None) -> None:
        self.store: Store = store or SQLiteStore(path / "transcripts.db")
        self.loop = asyncio.new_event_loop()

    def record(
        self,
        session_id: str,
        turns: Sequence[TurnRecord],
        *,
        tool_calls: int = 0,
        hacked: bool = False,
    ) -> list[TurnRecord]:
        """Store ``turns`` as one exchange of ``session_id`` (created on first use)."""
        update = SessionUpdate(
            session_id=session_id,
            harness="opencode",
            dialect="chat",
            cwd="/workspace",
            model="opencode",
            root_key="root",
            tool_calls=tool_calls,
            hacked=hacked,
        )
        return self.loop.run_until_complete(self.store.record_exchange(update, turns))

    def set_outcome(self, session_id: str, outcome: Mapping[str, Any]) -> SessionRecord:
        record = self.loop.run_until_complete(self.store.set_outcome(session_id, outcome))
        assert record is not None
        return record

    def session(self, session_id: str) -> SessionRecord:
        record = self.loop.run_until_complete(self.store.get_session(session_id))
        assert record is not None
        return record

    def turns(self, session_id: str) -> list[TurnRecord]:
        return self.loop.run_until_complete(self.store.turns(session_id))

    def rollout(
        self,
        session_id: str,
        reward: RewardFunction = default_reward,
        task_of: TaskOf = task_id_of,
    ) -> Rollout:
        found = self.loop.run_until_complete(
            read_rollout(self.store, session_id, reward, task_of=task_of)
        )
        assert found is not None
        return found

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self.store.close())
        finally:
            self.loop.close()


class Spread:
    """The default reward plus a hundredth per rollout index: a random tiny model fails every
    rollout alike, and a group scored alike has no advantage, so no sample to step on."""

    @hookimpl(wrapper=True)
    def safeagents_reward(self, session: SessionRecord) -> Generator[None, Any, float | None]:
        result: float | None = yield
        index = int(session.id.rsplit("-", 2)[1])  # the runner's {run}-{task}-{index}-{nonce}
        return None if result is None else result + 0.01 * index


async def stored_sessions(path: str) -> dict[str, tuple[SessionRecord, list[TurnRecord]]]:
    """Each session in the store at ``path``, and its turns."""
    store = SQLiteStore(path)
    try:
        found: dict[str, tuple[SessionRecord, list[TurnRecord]]] = {}
        for session in await store.list_sessions(limit=10_000):
            found[session.id] = (session, await store.turns(session.id))
        return found
    finally:
        await store.close()
