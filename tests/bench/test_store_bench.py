"""The store bench's figures: percentiles, and the ratios PostgreSQL / SQLite."""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.store_bench import percentile, ratios


def test_percentiles_pick_from_the_sorted_values() -> None:
    values = [float(n) for n in range(100, 0, -1)]
    assert percentile(values, 0.5) == 51.0 and percentile(values, 0.99) == 100.0
    assert math.isnan(percentile([], 0.5))


def test_ratios_are_postgres_over_sqlite_for_the_figures_both_have() -> None:
    got = ratios({"rps": 300.0, "added p50": 2.0, "failed": 0.0}, {"rps": 200.0, "added p50": 1.0})
    assert got == {"rps": 1.5, "added p50": 2.0}
    assert math.isnan(ratios({"failed": 1.0}, {"failed": 0.0})["failed"])
