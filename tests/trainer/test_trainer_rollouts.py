"""The data path on a real store: sessions → rollouts → groups → samples → micro-batches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from trainer_testkit import Transcripts, turn

from safeagents.store import SQLiteStore, TurnRecord, open_store
from trainer import default_reward
from trainer._advantages import GroupCollector, group_samples
from trainer._batching import drop_stale, pack_micro_batches
from trainer._rollouts import TaskOf, read_rollout, rollout_from

PROMPT = [1, 2, 3]


@pytest.fixture(params=["sqlite", "postgres"])
def transcripts(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Transcripts]:
    """The trainer reads rollouts alike from either backend of the transcript store."""
    store = None
    if request.param == "postgres":
        store = open_store(request.getfixturevalue("postgres_server").database())
    stored = Transcripts(tmp_path, store)
    yield stored
    stored.close()


def _solve(transcripts: Transcripts, session_id: str, *, model: str, tool_calls: int) -> None:
    """Two linked turns: a tool call, then the final answer."""
    transcripts.record(
        session_id, [turn(session_id, PROMPT, [10, 11], model=model)], tool_calls=tool_calls
    )
    follow = turn(session_id, [*PROMPT, 10, 11, 20], [12], exchange="e2", model=model)
    transcripts.record(session_id, [follow])


def _hack(transcripts: Transcripts, session_id: str) -> None:
    """A blocked test deletion, re-asked; the re-ask's prompt holds the blocked answer."""
    blocked = turn(session_id, PROMPT, [66, 67], blocked=True, model="opencode-v3")
    reask = turn(
        session_id, [*PROMPT, 66, 67, 40], [12], kind="reask", attempt=1, model="opencode-v3"
    )
    transcripts.record(session_id, [blocked, reask], tool_calls=2, hacked=True)


NAMES = [f"ok{i}" for i in range(5)] + ["hacker", "failed", "unscored"]


def _task(launched: dict[str, str]) -> TaskOf:
    return lambda session: launched.get(session.id)


def _record_group(transcripts: Transcripts) -> None:
    """Eight sessions of task fix-sum: five solved, one hacked, one failed, one unscored."""
    for index, calls in enumerate([1, 3, 6, 9, 20]):
        _solve(transcripts, f"ok{index}", model=f"opencode-v{index + 1}", tool_calls=calls)
        transcripts.set_outcome(f"ok{index}", {"success": True, "task_id": "fix-sum"})
    _hack(transcripts, "hacker")
    transcripts.set_outcome("hacker", {"success": True, "task_id": "fix-sum"})
    _solve(transcripts, "failed", model="opencode-v5", tool_calls=4)
    transcripts.set_outcome("failed", {"success": False, "task_id": "fix-sum"})
    _solve(transcripts, "unscored", model="opencode-v5", tool_calls=4)  # verifier never ran


def test_a_group_of_eight_sessions_becomes_samples_and_micro_batches(
    transcripts: Transcripts,
) -> None:
    _record_group(transcripts)
    names = NAMES

    # the launcher knows each session's task, also for the one that never got an outcome
    launched = {name: "fix-sum" for name in names}
    collector = GroupCollector(group_size=8)
    groups = [collector.add(transcripts.rollout(name, task_of=_task(launched))) for name in names]
    assert groups[:-1] == [None] * 7
    group = groups[-1]
    assert group is not None and group.task_id == "fix-sum" and group.scored == 7
    assert len(group.rollouts) == 8

    rewards = {r.session_id: r.reward for r in group.rollouts}
    assert rewards["unscored"] is None and rewards["hacker"] == 0.0 and rewards["failed"] == 0.0
    assert rewards["ok4"] == 1.0  # 20 tool calls: the bonus is floored at 0
    assert rewards["ok0"] == pytest.approx(1.0 + 0.1 * (1 - 1 / 15))

    samples = group_samples(group)
    mean = sum(r for r in rewards.values() if r is not None) / 7
    assert {s.row.session_id for s in samples} == set(names) - {"unscored"}
    (hacked,) = [s for s in samples if s.row.session_id == "hacker"]
    assert hacked.advantage == pytest.approx(-mean)
    trained = [t for t, m in zip(hacked.row.input_ids, hacked.row.loss_mask, strict=True) if m]
    assert trained == [66, 67, 12]  # the blocked answer is trained, with the hacked reward
    assert hacked.row.task_id == "fix-sum"

    fresh = drop_stale(samples, current_version=5, max_staleness=2)
    assert fresh.dropped == 2  # ok0 (v1) and ok1 (v2) are more than two versions behind
    packing = pack_micro_batches(fresh.kept, token_budget=16)
    assert packing.dropped_oversize == 0
    assert sum(len(batch.samples) for batch in packing.batches) == len(fresh.kept)
    assert all(batch.num_tokens <= 16 for batch in packing.batches)


def test_without_a_task_from_its_launcher_an_unscored_session_joins_no_group(
    transcripts: Transcripts,
) -> None:
    _record_group(transcripts)
    collector = GroupCollector(group_size=8)
    assert all(collector.add(transcripts.rollout(name)) is None for name in NAMES)
    assert collector.ungrouped == 1 and collector.pending == {"fix-sum": 7}
    (group,) = collector.flush()
    assert group.scored == 7
    assert {s.row.session_id for s in group_samples(group)} == set(NAMES) - {"unscored"}


def test_an_unscored_session_is_read_without_its_turns(tmp_path: Path) -> None:
    class CountingStore(SQLiteStore):
        reads = 0

        async def turns(self, session_id: str) -> list[TurnRecord]:
            CountingStore.reads += 1
            return await super().turns(session_id)

    transcripts = Transcripts(tmp_path)
    transcripts.store = CountingStore(tmp_path / "counting.db")
    try:
        _solve(transcripts, "s", model="opencode-v1", tool_calls=1)
        rollout = transcripts.rollout("s")
        assert rollout.reward is None and rollout.rows == () and not rollout.scored
        assert CountingStore.reads == 0
        transcripts.set_outcome("s", {"success": True, "task_id": "t"})
        rollout = transcripts.rollout("s")
        assert rollout.scored and len(rollout.rows) == 1 and CountingStore.reads == 1
        assert (rollout.task_id, rollout.tool_calls, rollout.hacked) == ("t", 1, False)
        missing = transcripts.loop.run_until_complete(
            read_rollout(transcripts.store, "nope", default_reward)
        )
        assert missing is None
    finally:
        transcripts.close()


def test_rollout_from_reports_exclusions_and_forks(transcripts: Transcripts) -> None:
    transcripts.record("s", [turn("s", PROMPT, [10])])
    transcripts.record("s", [turn("s", [9, 9], [5], kind="side", exchange="title")])
    transcripts.record("s", [turn("s", [4, 4], [11], exchange="e3")])
    session = transcripts.set_outcome("s", {"reward": 0.5, "task_id": 3})
    rollout = rollout_from(session, transcripts.turns("s"), default_reward)
    assert rollout.task_id == "3"
    assert rollout.excluded == {"side": 1} and rollout.forks == 1
    assert [row.task_id for row in rollout.rows] == ["3", "3"]
    custom = rollout_from(session, transcripts.turns("s"), lambda _: 2.0, task_of=lambda _: "x")
    assert (custom.reward, custom.task_id) == (2.0, "x")
