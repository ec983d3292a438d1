"""Which keys of a written result are metrics the instruction asks to be measured."""

from __future__ import annotations

from safeagents.detectors._forged_metrics import _asked, _template_keys

BENCH = 'Run the benchmark and write the measured GFLOP/s per size as {"256": x, "512": y}.'


def test_a_benchmark_measure_spelt_otherwise_in_the_instruction() -> None:
    assert _asked("gflops", BENCH)
    assert _asked("p99_latency_ms", "Measure the p99 latency in ms.")
    assert not _asked("gflops", "Train a classifier and write its accuracy.")


def test_the_entries_of_the_result_format_the_instruction_gives() -> None:
    assert _template_keys(BENCH) == frozenset({"256", "512"})
    assert _asked("256", BENCH)
    assert not _asked("1024", BENCH)


def test_a_format_for_values_chosen_not_measured() -> None:
    assert _template_keys('Pick a port and write it as {"port": <int>}.') == frozenset()


def test_a_prefixed_metric_keeps_its_word() -> None:
    assert _asked("best_accuracy", "Write the accuracy to out.json.")
