"""Group-relative advantages: mean-centring, std scaling, unscored members, hacked zeros."""

from __future__ import annotations

import itertools
import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainer._advantages import Group, GroupCollector, group_advantages, group_samples
from trainer._rollouts import Rollout
from trainer._rows import Row


def _row(session_id: str, *tokens: int) -> Row:
    size = len(tokens)
    return Row(
        input_ids=tokens,
        loss_mask=(0,) + (1,) * (size - 1),
        logprobs=(0.0,) + (-0.5,) * (size - 1),
        session_id=session_id,
        harness="opencode",
        task_id="t",
        models=("opencode-v1",),
        turns=(1,),
    )


def _rollout(
    session_id: str, reward: float | None, *, task: str | None = "t", hacked: bool = False
) -> Rollout:
    rows = () if reward is None else (_row(session_id, 1, 2, 3), _row(session_id, 4, 5))
    return Rollout(session_id, "opencode", task, reward, hacked, 3, rows=rows)


def test_advantages_are_rewards_minus_the_mean_of_the_scored_ones() -> None:
    assert group_advantages([1.0, 0.0, None, 0.5]) == [0.5, -0.5, None, 0.0]


def test_std_scaling_divides_by_the_sample_deviation_of_scored_rewards() -> None:
    rewards = [1.08, 0.0, None, 1.02, 0.0]
    scored = [r for r in rewards if r is not None]
    mean, deviation = statistics.fmean(scored), statistics.stdev(scored)
    got = group_advantages(rewards, scale_std=True)
    expected = [None if r is None else (r - mean) / (deviation + 1e-4) for r in rewards]
    assert got == pytest.approx(expected)


def test_equal_rewards_give_zero_advantages_with_or_without_scaling() -> None:
    assert group_advantages([1.0, 1.0, 1.0]) == [0.0, 0.0, 0.0]
    assert group_advantages([0.0, 0.0], scale_std=True) == [0.0, 0.0]


@pytest.mark.parametrize("rewards", [[], [None], [1.0], [None, 0.5, None]])
def test_fewer_than_two_scored_rewards_give_no_advantages(rewards: list[float | None]) -> None:
    assert group_advantages(rewards) == [None] * len(rewards)
    assert group_advantages(rewards, scale_std=True) == [None] * len(rewards)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.none() | st.floats(-10, 10, allow_nan=False), max_size=12),
    st.booleans(),
)
def test_scored_advantages_sum_to_zero_and_keep_the_order_of_rewards(
    rewards: list[float | None], scale_std: bool
) -> None:
    got = group_advantages(rewards, scale_std=scale_std)
    assert len(got) == len(rewards)
    assert [a is None for a in got] == [
        r is None or sum(x is not None for x in rewards) < 2 for r in rewards
    ]
    pairs = [(r, a) for r, a in zip(rewards, got, strict=True) if a is not None and r is not None]
    assert math.fsum(a for _, a in pairs) == pytest.approx(0.0, abs=1e-6)
    for (r1, a1), (r2, a2) in itertools.pairwise(pairs):
        if r1 < r2:
            assert a1 <= a2


def test_a_hacked_zero_is_part_of_the_baseline_and_unscored_rollouts_yield_nothing() -> None:
    group = Group(
        "t",
        (
            _rollout("good", 1.08),
            _rollout("hacker", 0.0, hacked=True),
            _rollout("lost", None),
            _rollout("slow", 1.0),
        ),
    )
    assert group.scored == 3
    samples = group_samples(group)
    mean = (1.08 + 0.0 + 1.0) / 3
    by_session = {s.row.session_id: s for s in samples}
    assert set(by_session) == {"good", "hacker", "slow"}
    assert len(samples) == 6  # two rows per scored rollout
    assert by_session["hacker"].advantage == pytest.approx(-mean)
    assert by_session["hacker"].reward == 0.0
    rewards = {"good": 1.08, "hacker": 0.0, "slow": 1.0}
    for sample in samples:  # every row carries its own rollout's advantage
        assert sample.reward == rewards[sample.row.session_id]
        assert sample.advantage == pytest.approx(rewards[sample.row.session_id] - mean)


def test_a_group_with_fewer_than_two_scored_rollouts_yields_no_samples() -> None:
    assert group_samples(Group("t", (_rollout("a", 1.0), _rollout("b", None)))) == []
    assert group_samples(Group("t", (_rollout("a", 1.0),))) == []


def test_the_collector_releases_a_group_once_it_holds_group_size_rollouts() -> None:
    collector = GroupCollector(group_size=3)
    assert collector.add(_rollout("a1", 1.0, task="a")) is None
    assert collector.add(_rollout("b1", 0.0, task="b")) is None
    assert collector.add(_rollout("a2", None, task="a")) is None
    assert collector.pending == {"a": 2, "b": 1}
    group = collector.add(_rollout("a3", 0.0, task="a"))
    assert group is not None and group.task_id == "a"
    assert [r.session_id for r in group.rollouts] == ["a1", "a2", "a3"]
    assert collector.pending == {"b": 1}


def test_the_collector_counts_rollouts_without_a_task_and_flushes_partial_groups() -> None:
    collector = GroupCollector()
    assert collector.group_size == 8
    assert collector.add(_rollout("x", 1.0, task=None)) is None
    assert collector.ungrouped == 1 and collector.pending == {}
    for index in range(3):
        collector.add(_rollout(f"a{index}", 1.0, task="a"))
        collector.add(_rollout(f"b{index}", 1.0, task="b"))
    (only_a,) = collector.flush("a")
    assert only_a.task_id == "a" and len(only_a.rollouts) == 3
    assert collector.flush("a") == []
    (rest,) = collector.flush()
    assert rest.task_id == "b" and collector.pending == {}


def test_a_group_needs_room_for_two_rollouts() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        GroupCollector(group_size=1)
