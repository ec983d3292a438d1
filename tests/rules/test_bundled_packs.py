"""The bundled rule packs: every fixture case passes and every rule meets the minimums."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from safeagents import Firewall
from safeagents._actions import AnalysisContext, ToolCall
from safeagents._registry import default_registry
from safeagents.rules import CATEGORIES, FixtureResult, Rule, RuleSet, run_fixtures

BUNDLED = Path(__file__).resolve().parents[2] / "rules"
PACKS = ("reward-hacking", "destructive", "secrets", "fail-closed")
HEADINGS = ("## What it does", "## Why is this bad?", "## Example")
MINIMUM_CASES = 3
MINIMUM_HARNESSES = 3

# Categories of the reward-hack taxonomy (docs/rule-dsl.md, "Categories") that a single tool
# call can reveal; false completion claims are judged from the final message, not a call.
SINGLE_CALL_CATEGORIES = (
    "test-tampering",
    "test-skipping",
    "report-forging",
    "early-exit",
    "always-equal",
    "state-toggle",
    "special-casing",
    "introspection",
    "oracle-access",
    "git-history",
    "solution-download",
    "grader-tampering",
    "timer-killing",
    "output-spoofing",
)


@cache
def bundled_rules() -> RuleSet:
    return RuleSet.load([BUNDLED])


@cache
def fixture_results() -> dict[tuple[str, str], FixtureResult]:
    return {
        (result.rule_id, result.case): result
        for result in run_fixtures(
            [BUNDLED], checker=Firewall, harness=default_registry().harness, min_cases=3
        )
    }


def _fixture_file(rule_file: Path) -> Path:
    return rule_file.with_name(rule_file.stem + ".test.yaml")


def _rule_files() -> list[Path]:
    return sorted(
        path
        for path in BUNDLED.glob("*/*.yaml")
        if path.name != "pack.yaml" and not path.name.endswith(".test.yaml")
    )


def _cases(rule_file: Path) -> list[dict[str, Any]]:
    fixture = _fixture_file(rule_file)
    if not fixture.is_file():
        return []
    data = yaml.safe_load(fixture.read_text(encoding="utf-8")) or {}
    return list(data.get("cases") or [])


def _all_cases() -> Iterator[Any]:
    for rule_file in _rule_files():
        for case in _cases(rule_file):
            yield pytest.param(rule_file.stem, case, id=f"{rule_file.stem}::{case['name']}")


def test_bundled_packs_load() -> None:
    rules = bundled_rules()
    assert {rule.pack for rule in rules} == set(PACKS)
    assert {rule.id for rule in rules} == {path.stem for path in _rule_files()}


@pytest.mark.parametrize(("rule_id", "case"), list(_all_cases()))
def test_fixture_case(rule_id: str, case: dict[str, Any]) -> None:
    result = fixture_results().get((rule_id, case["name"]))
    assert result is not None, f"no result for {rule_id} :: {case['name']}"
    assert result.passed, f"{result.source}: {result.detail}"


@pytest.mark.parametrize("rule_file", _rule_files(), ids=lambda path: path.stem)
def test_rule_meets_minimums(rule_file: Path) -> None:
    rule = bundled_rules().get(rule_file.stem)
    cases = _cases(rule_file)
    names = [case["name"] for case in cases]
    assert len(names) == len(set(names)), "case names must be unique within a rule"
    expects = [case["expect"] for case in cases]
    assert expects.count("match") >= MINIMUM_CASES, "needs 3 match cases"
    assert expects.count("ok") >= MINIMUM_CASES, "needs 3 ok near-misses"
    harnesses = {case["harness"] for case in cases}
    assert len(harnesses) >= MINIMUM_HARNESSES, f"fixtures use only {sorted(harnesses)}"
    for heading in HEADINGS:
        assert heading in rule.description, f"description lacks {heading!r}"
    assert "{rule}" in rule.message, "the message must name the rule"
    assert "{summary}" in rule.message or "{command}" in rule.message
    assert rule.category in CATEGORIES


@pytest.mark.parametrize(("rule_id", "case"), list(_all_cases()))
def test_fixture_uses_a_real_tool_schema(rule_id: str, case: dict[str, Any]) -> None:
    harness = default_registry().harness(case["harness"])
    if "tool" not in case:  # a turn of text alone: no call to check the schema of
        assert case["text"]
        return
    call = ToolCall("schema-check", case["tool"], case.get("arguments", {}))
    assert harness.effects(call, AnalysisContext()) is not None, (
        f"{case['harness']} has no tool {case['tool']!r}"
    )


def test_every_single_call_category_has_a_rule() -> None:
    covered = {rule.category for rule in bundled_rules()}
    assert set(SINGLE_CALL_CATEGORIES) <= covered, set(SINGLE_CALL_CATEGORIES) - covered


def test_rejecting_rules_are_not_severity_info() -> None:
    rules: list[Rule] = [rule for rule in bundled_rules() if rule.action == "reject"]
    assert rules
    assert all(rule.severity in ("high", "critical") for rule in rules)
