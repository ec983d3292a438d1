"""The public surface of ``safeagents.rules``."""

from __future__ import annotations

import dataclasses

import pytest

import safeagents.rules as rules
from safeagents._actions import Effect, ToolCall
from safeagents.rules import CallVerdict, Finding, RuleError, RuleLoadError


def test_all_is_sorted_and_complete() -> None:
    public = {name for name in vars(rules) if not name.startswith("_")}
    public -= {"annotations"}
    assert sorted(rules.__all__) == sorted(public)
    for name in [
        "RuleSet",
        "Rule",
        "Pack",
        "Engine",
        "Finding",
        "CallVerdict",
        "RuleError",
        "RuleLoadError",
        "run_fixtures",
        "FixtureResult",
        "bundled_rules_path",
    ]:
        assert name in rules.__all__
    assert rules.Engine.__module__ == "safeagents.rules"


def test_records_are_frozen() -> None:
    finding = Finding("r", "other", "low", "warn", "c", "bash", "s", "m", effect=Effect("exec"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.rule_id = "x"  # type: ignore[misc]
    verdict = CallVerdict(ToolCall("c", "bash"), "pi", (), (finding,))
    assert not verdict.blocked and not verdict.hacked


def test_load_error_lists_one_error_per_line() -> None:
    error = RuleLoadError([RuleError("a.yaml", 1, 2, "x"), RuleError("b.yaml", 3, 4, "y")])
    assert str(error) == "a.yaml:1:2: x\nb.yaml:3:4: y"
    assert len(error.errors) == 2
