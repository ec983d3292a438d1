"""Versions from served names, the staleness filter, token-budget packing and flat layout."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainer import adapter_name
from trainer._advantages import Sample
from trainer._batching import drop_stale, pack_micro_batches, parse_version, row_version
from trainer._rows import Row


def _sample(
    size: int,
    *,
    models: tuple[str, ...] = ("opencode-v1",),
    harness: str = "opencode",
    advantage: float = 0.5,
    name: str = "s",
) -> Sample:
    trained = max(1, size // 2)
    row = Row(
        input_ids=tuple(range(size)),
        loss_mask=(0,) * (size - trained) + (1,) * trained,
        logprobs=(0.0,) * (size - trained) + (-0.25,) * trained,
        session_id=name,
        harness=harness,
        task_id="t",
        models=models,
        turns=tuple(range(1, len(models) + 1)),
    )
    return Sample(row, advantage, 1.0)


@pytest.mark.parametrize(
    ("model", "harness", "expected"),
    [
        ("opencode-v3", None, 3),
        ("opencode-v3", "opencode", 3),
        ("claude-code-v12", "claude-code", 12),
        ("mini-swe-agent-v0", None, 0),
        ("pi-v2", "opencode", None),
        ("opencode", None, None),
        ("opencode-v", None, None),
        ("opencode-v03", None, None),
        ("opencode-v3-extra", None, None),
        ("Qwen/Qwen3-8B", None, None),
    ],
)
def test_parse_version(model: str, harness: str | None, expected: int | None) -> None:
    assert parse_version(model, harness) == expected


@settings(max_examples=100, deadline=None)
@given(st.from_regex(r"[a-z][a-z0-9_-]{0,20}", fullmatch=True), st.integers(0, 10**6))
def test_adapter_names_parse_back(harness: str, version: int) -> None:
    assert parse_version(adapter_name(harness, version), harness) == version


def test_adapter_versions_are_not_negative() -> None:
    with pytest.raises(ValueError):
        adapter_name("pi", -1)


def test_a_row_is_as_old_as_its_oldest_turn_and_the_base_model_is_version_zero() -> None:
    assert row_version(_sample(4, models=("opencode-v7", "opencode-v5")).row) == 5
    assert row_version(_sample(4, models=("Qwen/Qwen3-8B", "opencode-v2")).row) == 0
    assert row_version(_sample(4, models=("pi-v9",)).row) == 0  # not this harness's adapter


def test_samples_more_than_max_staleness_versions_behind_are_dropped_and_counted() -> None:
    samples = [
        _sample(4, models=(f"opencode-v{version}",), name=f"v{version}") for version in range(11)
    ]
    filtered = drop_stale(samples, current_version=10, max_staleness=4)
    assert [s.row.session_id for s in filtered.kept] == ["v6", "v7", "v8", "v9", "v10"]
    assert filtered.dropped == 6
    assert drop_stale(samples, current_version=10, max_staleness=0).dropped == 10
    base = _sample(4, models=("Qwen/Qwen3-8B",))
    assert drop_stale([base], current_version=4).dropped == 0
    assert drop_stale([base], current_version=5).dropped == 1
    with pytest.raises(ValueError, match="max_staleness"):
        drop_stale(samples, current_version=1, max_staleness=-1)


def test_a_row_mixing_versions_is_judged_by_its_oldest_turn() -> None:
    mixed = _sample(4, models=("opencode-v9", "opencode-v3"))
    assert drop_stale([mixed], current_version=9, max_staleness=4).dropped == 1
    assert drop_stale([mixed], current_version=7, max_staleness=4).dropped == 0


def test_packing_fills_batches_up_to_the_budget_and_drops_oversize_samples() -> None:
    sizes = [60, 30, 40, 20, 101, 10, 100, 50]
    samples = [_sample(size, name=f"n{size}") for size in sizes]
    packing = pack_micro_batches(samples, token_budget=100)
    assert packing.dropped_oversize == 1
    assert [[s.row.num_tokens for s in batch.samples] for batch in packing.batches] == [
        [100],
        [60, 40],
        [50, 30, 20],
        [10],
    ]
    assert [batch.num_tokens for batch in packing.batches] == [100, 100, 100, 10]
    assert packing.batches[1].num_trained == 30 + 20


def test_packing_nothing_and_its_preconditions() -> None:
    empty = pack_micro_batches([])
    assert empty.batches == () and empty.dropped_oversize == 0
    with pytest.raises(ValueError, match="token_budget"):
        pack_micro_batches([_sample(3)], token_budget=0)
    with pytest.raises(ValueError, match="several adapters"):
        pack_micro_batches([_sample(3), _sample(3, harness="pi", models=("pi-v1",))])


def test_the_default_budget_is_65536_tokens() -> None:
    packing = pack_micro_batches([_sample(65_536), _sample(65_537), _sample(1)])
    assert packing.dropped_oversize == 1
    assert [batch.num_tokens for batch in packing.batches] == [65_536, 1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 120), max_size=30), st.integers(1, 100))
def test_packing_keeps_every_fitting_sample_once_within_budget(
    sizes: list[int], budget: int
) -> None:
    samples = [_sample(size, name=str(index)) for index, size in enumerate(sizes)]
    packing = pack_micro_batches(samples, token_budget=budget)
    packed = [s.row.session_id for batch in packing.batches for s in batch.samples]
    fitting = [str(index) for index, size in enumerate(sizes) if size <= budget]
    assert sorted(packed) == sorted(fitting)
    assert packing.dropped_oversize == len(sizes) - len(fitting)
    assert all(0 < batch.num_tokens <= budget for batch in packing.batches)
    half_full = [batch for batch in packing.batches if 2 * batch.num_tokens <= budget]
    assert len(half_full) <= 1  # first fit never leaves two batches that could merge


def test_a_micro_batch_lays_its_samples_out_flat() -> None:
    first = _sample(4, advantage=0.5)  # mask 0 0 1 1
    second = _sample(3, advantage=-2.0)  # mask 0 0 1
    packing = pack_micro_batches([second, first], token_budget=10)
    (batch,) = packing.batches
    flat = batch.flat()
    assert flat.seq_lengths == [4, 3]
    assert flat.input_ids == [0, 1, 2, 3, 0, 1, 2]
    assert flat.position_ids == [0, 1, 2, 3, 0, 1, 2]
    assert flat.loss_mask == [0, 0, 1, 1, 0, 0, 1]
    assert flat.logprobs == [0.0, 0.0, -0.25, -0.25, 0.0, 0.0, -0.25]
    assert flat.advantages == [0.0, 0.0, 0.5, 0.5, 0.0, 0.0, -2.0]
