"""The paired A/B's summary: medians per system, added over direct, per-round differences."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bench.proxy.paired import summary_line


def test_the_paired_difference_is_the_median_of_per_round_differences() -> None:
    rounds = [
        {"direct": 0.1, "A": 1.0, "B": 1.5},
        {"direct": 0.1, "A": 9.0, "B": 9.2},  # a noisy round moves both
        {"direct": 0.1, "A": 2.0, "B": 2.3},
        {"direct": 0.1, "A": 1.0, "B": float("nan")},  # a failed request: the round is dropped
    ]
    line = summary_line("nonstream-100B", rounds, ["A", "B"])
    assert "n=    3" in line
    assert "A: p50 2.00 (+1.90)" in line
    assert "B: p50 2.30 (+2.20) p10 1.50 paired +0.300" in line
    assert "A: p50 2.00 (+1.90) p10 1.00 |" in line  # the base has no paired figure
