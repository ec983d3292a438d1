"""Rows from recorded turns: prefix linking, forks, masks, logprob alignment, exclusions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trainer_testkit import Transcripts, logprob_of, turn

from safeagents.store import TurnRecord
from trainer._rows import Row, build_rows

SYSTEM = [1, 2, 3]


def _trained(row: Row) -> list[int]:
    return [token for token, mask in zip(row.input_ids, row.loss_mask, strict=True) if mask]


def _assert_aligned(row: Row) -> None:
    """Trained positions carry the token's own logprob, context positions 0."""
    for token, mask, logprob in zip(row.input_ids, row.loss_mask, row.logprobs, strict=True):
        assert logprob == (logprob_of(token) if mask else 0.0)


def test_turns_extending_each_other_form_one_row(transcripts: Transcripts) -> None:
    first = turn("s", SYSTEM, [10, 11], model="opencode-v1")
    second = turn("s", [*SYSTEM, 10, 11, 20, 21], [12], exchange="e2", model="opencode-v2")
    third = turn("s", [*SYSTEM, 10, 11, 20, 21, 12, 22], [13, 14], exchange="e3")
    transcripts.record("s", [first])
    transcripts.record("s", [second])
    transcripts.record("s", [third])

    built = build_rows(transcripts.turns("s"), task_id="task-1")

    assert built.forks == 0 and built.excluded == {}
    (row,) = built.rows
    assert row.input_ids == (1, 2, 3, 10, 11, 20, 21, 12, 22, 13, 14)
    assert row.loss_mask == (0, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1)
    _assert_aligned(row)
    assert row.models == ("opencode-v1", "opencode-v2", "opencode-v1")
    assert row.turns == (1, 2, 3)
    assert (row.session_id, row.harness, row.task_id) == ("s", "opencode", "task-1")
    assert (row.num_tokens, row.num_trained) == (11, 5)


def test_a_broken_prefix_starts_a_new_row_with_its_prompt_masked(
    transcripts: Transcripts,
) -> None:
    transcripts.record("s", [turn("s", SYSTEM, [10, 11])])
    transcripts.record("s", [turn("s", [*SYSTEM, 10, 11, 20], [12], exchange="e2")])
    # history compaction: the earlier answers are summarised into new tokens
    compacted = [*SYSTEM, 99, 98]
    transcripts.record("s", [turn("s", compacted, [13], exchange="e3")])
    transcripts.record("s", [turn("s", [*compacted, 13, 30], [14, 15], exchange="e4")])

    built = build_rows(transcripts.turns("s"))

    assert built.forks == 1
    before, after = built.rows
    assert _trained(before) == [10, 11, 12]
    assert after.input_ids == (1, 2, 3, 99, 98, 13, 30, 14, 15)
    assert after.loss_mask == (0, 0, 0, 0, 0, 1, 0, 1, 1)
    assert after.turns == (3, 4)
    for row in built.rows:
        _assert_aligned(row)


def test_a_branch_from_an_earlier_point_does_not_reuse_the_extended_row() -> None:
    turns = [
        turn("s", SYSTEM, [10], seq=1),
        turn("s", [*SYSTEM, 10, 20], [11], seq=2),
        turn("s", [*SYSTEM, 10, 21], [12], seq=3),  # a retry of seq 2 with other context
    ]
    built = build_rows(turns)
    assert [row.input_ids for row in built.rows] == [
        (1, 2, 3, 10, 20, 11),
        (1, 2, 3, 10, 21, 12),
    ]
    assert built.rows[1].loss_mask == (0, 0, 0, 0, 0, 1)  # seq 1's answer is context there
    assert built.forks == 1


def test_a_turn_extends_the_longest_row_it_starts_with() -> None:
    turns = [
        turn("s", [1, 2], [3], seq=1),
        turn("s", [1, 2, 3, 4], [5], seq=2),  # row A: 1 2 3 4 5
        turn("s", [1], [2, 3], seq=3),  # row B: 1 2 3, a prefix of row A
        turn("s", [1, 2, 3, 4, 5, 6], [7], seq=4),
    ]
    row_a, row_b = build_rows(turns).rows
    assert row_a.input_ids == (1, 2, 3, 4, 5, 6, 7)
    assert row_a.turns == (1, 2, 4)
    assert row_b.input_ids == (1, 2, 3)


def test_turns_are_linked_in_seq_order_whatever_order_they_come_in() -> None:
    turns = [
        turn("s", SYSTEM, [10], seq=1),
        turn("s", [*SYSTEM, 10, 20], [11], seq=2),
        turn("s", [*SYSTEM, 10, 20, 11, 21], [12], seq=3),
    ]
    assert build_rows(reversed(turns)) == build_rows(turns)
    assert len(build_rows(turns).rows) == 1


def test_side_aborted_error_and_unusable_turns_are_excluded_and_counted(
    transcripts: Transcripts,
) -> None:
    transcripts.record("s", [turn("s", SYSTEM, [10, 11])])
    transcripts.record("s", [turn("s", [7, 7], [8], kind="side", exchange="title")])
    transcripts.record("s", [turn("s", [*SYSTEM, 10, 11, 20], [12], status="aborted")])
    transcripts.record("s", [turn("s", [*SYSTEM, 10, 11, 20], [13], status="error")])
    transcripts.record("s", [turn("s", [*SYSTEM, 10, 11, 20], [14], tokens=False)])
    transcripts.record("s", [turn("s", [*SYSTEM, 10, 11, 20], [])])
    transcripts.record("s", [turn("s", [], [15])])
    transcripts.record("s", [turn("s", [*SYSTEM, 10, 11, 20], [16, 17], logprobs=[-0.1])])
    transcripts.record("s", [turn("s", [*SYSTEM, 10, 11, 21], [18], exchange="e9")])

    built = build_rows(transcripts.turns("s"))

    assert built.excluded == {
        "side": 1,
        "aborted": 1,
        "error": 1,
        "no_tokens": 1,
        "empty_completion": 1,
        "empty_prompt": 1,
        "misaligned_logprobs": 1,
    }
    (row,) = built.rows  # the side call between main turns does not break the chain
    assert _trained(row) == [10, 11, 18]
    assert row.turns == (1, 9)
    _assert_aligned(row)


def test_a_reask_that_extends_the_blocked_answer_trains_both_in_one_row(
    transcripts: Transcripts,
) -> None:
    rejection = [40, 41]
    blocked = turn("s", SYSTEM, [10, 11], blocked=True)
    reask = turn("s", [*SYSTEM, 10, 11, *rejection], [12], kind="reask", attempt=1)
    transcripts.record("s", [blocked, reask], tool_calls=2, hacked=True)
    following = [*SYSTEM, 10, 11, *rejection, 12, 50]  # the pair spliced back in
    transcripts.record("s", [turn("s", following, [13], exchange="e2")])

    (row,) = build_rows(transcripts.turns("s")).rows

    assert _trained(row) == [10, 11, 12, 13]
    assert row.loss_mask == (0, 0, 0, 1, 1, 0, 0, 1, 0, 1)
    _assert_aligned(row)


def test_a_reask_whose_prompt_rewrites_the_blocked_answer_leaves_it_a_row_of_its_own(
    transcripts: Transcripts,
) -> None:
    blocked = turn("s", SYSTEM, [10, 11, 19], blocked=True)
    # the answer's text already reached the harness, so only its calls are shown again
    reask = turn("s", [*SYSTEM, 10, 19, 40], [12], kind="reask", attempt=1)
    transcripts.record("s", [blocked, reask], tool_calls=2, hacked=True)

    built = build_rows(transcripts.turns("s"))

    assert built.forks == 1
    blocked_row, reask_row = built.rows
    assert blocked_row.input_ids == (1, 2, 3, 10, 11, 19)
    assert _trained(blocked_row) == [10, 11, 19]
    assert _trained(reask_row) == [12]
    assert reask_row.input_ids[:6] == (1, 2, 3, 10, 19, 40)


def test_no_turns_no_rows_and_mixed_sessions_are_refused() -> None:
    assert build_rows([]).rows == ()
    with pytest.raises(ValueError, match="several sessions"):
        build_rows([turn("a", [1], [2]), turn("b", [1], [2])])


def test_a_row_checks_its_lengths() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        Row((1, 2), (0, 1), (0.0,), "s", "opencode", None, ("m",), (1,))
    with pytest.raises(ValueError, match="one model name per trained turn"):
        Row((1, 2), (0, 1), (0.0, -1.0), "s", "opencode", None, ("m",), ())


@st.composite
def _sessions(draw: st.DrawFn) -> tuple[list[TurnRecord], int]:
    """Turns that extend the previous turn's row, or start afresh (counted)."""
    fresh_token = 1000
    history: list[int] = []
    turns: list[TurnRecord] = []
    restarts = 0
    for seq in range(1, draw(st.integers(1, 12)) + 1):
        context = draw(st.lists(st.integers(1, 999), max_size=4))
        completion = draw(st.lists(st.integers(1, 999), min_size=1, max_size=4))
        if not history or draw(st.booleans()):
            extended = history + context
        else:  # a fresh prompt no row can be a prefix of
            fresh_token += 1
            extended = [fresh_token, *context]
            restarts += 1
        prompt = extended or [fresh_token + 5000]
        turns.append(turn("s", prompt, completion, seq=seq))
        history = [*prompt, *completion]
    return turns, restarts


@settings(max_examples=150, deadline=None)
@given(_sessions())
def test_every_sampled_token_is_trained_exactly_once(session: tuple[list[TurnRecord], int]) -> None:
    turns, restarts = session
    built = build_rows(turns)
    assert len(built.rows) == 1 + restarts
    assert built.forks == restarts
    captured = {t.seq: t.tokens for t in turns if t.tokens is not None}
    for row in built.rows:
        _assert_aligned(row)
        expected = [token for seq in row.turns for token in captured[seq].completion_token_ids]
        assert _trained(row) == expected
        for seq in row.turns:
            prompt = captured[seq].prompt_token_ids
            assert row.input_ids[: len(prompt)] == prompt
    assert sum(row.num_trained for row in built.rows) == sum(
        len(tokens.completion_token_ids) for tokens in captured.values()
    )


def test_turns_not_sampled_with_the_run_s_parameters_are_refused() -> None:
    from dataclasses import replace

    from safeagents.protocols import Sampling

    run = Sampling(temperature=0.8)
    enforced = turn("s", SYSTEM, [10, 11], seq=1)
    enforced = replace(enforced, tokens=replace(enforced.tokens, sampling=run.to_json()))
    other = turn("s", [*SYSTEM, 10, 11, 20], [12], exchange="e2", seq=2)
    hotter = Sampling(temperature=1.0).to_json()
    other = replace(other, tokens=replace(other.tokens, sampling=hotter))
    unrecorded = turn("s", [*SYSTEM, 10, 11, 20, 12, 21], [13], exchange="e3", seq=3)

    built = build_rows([enforced, other, unrecorded], sampling=run)

    assert built.excluded == {"sampling": 2}
    (row,) = built.rows
    assert _trained(row) == [10, 11]
    # without the run's sampling (the pure data path of old stores) nothing is refused
    assert build_rows([enforced, other, unrecorded]).excluded == {}
