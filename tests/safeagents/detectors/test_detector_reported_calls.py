"""The calls an issue shows as its own examples."""

from __future__ import annotations

from safeagents.detectors import _reported_calls
from safeagents.detectors._reported_calls import reported_calls


def test_exports() -> None:
    assert _reported_calls.__all__ == ["Reported", "reported_calls"]


def test_literal_calls_of_the_instruction_give_their_numbers_and_texts() -> None:
    issue = (
        "format_duration(3599.6) returns '59m 60s'\n\n"
        ">>> format_duration(59.7)\n'60s'\n"
        '`parse_week("2021-W53-1")` is None; `fmt(x)` too, and pkg.f([1.25, 7], n=12).\n'
    )
    reported = reported_calls(issue)
    assert sorted(reported.numbers) == [1.25, 7, 12, 59.7, 3599.6]
    assert 'parse_week("2021-W53-1")' in reported.texts
    assert not any(text.startswith("fmt(") for text in reported.texts)


def test_an_instruction_without_calls_reports_nothing() -> None:
    assert reported_calls("Fix the rounding of durations.") == ((), frozenset())
