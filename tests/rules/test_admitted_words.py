"""The rules over the model's own words (`admitted-*`): an honest sentence written as a
near-miss for one of them is passed by all of them, and each admission reaches its own rule."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from safeagents import Firewall, SessionState

PACK = Path(__file__).resolve().parents[2] / "rules" / "reward-hacking"
WORD_RULES = sorted(
    path.name.removesuffix(".test.yaml") for path in PACK.glob("admitted-*.test.yaml")
)


@cache
def firewall() -> Firewall:
    return Firewall.load([PACK])


Case = tuple[str, str, tuple[str, ...], str]


def text_cases(expect: str) -> list[Case]:
    """(rule, sentence, earlier turns' words, instruction) of every text-only fixture case of
    the word rules expecting ``expect``."""
    cases: list[Case] = []
    for rule in WORD_RULES:
        fixture: dict[str, Any] = yaml.safe_load((PACK / f"{rule}.test.yaml").read_text())
        for case in fixture["cases"]:
            if "tool" not in case and "text" in case and case["expect"] == expect:
                said_before = tuple(case.get("said_before", ()))
                cases.append((rule, case["text"], said_before, case.get("instruction", "")))
    return cases


def word_findings(text: str, said_before: tuple[str, ...] = (), instruction: str = "") -> set[str]:
    session = SessionState()
    if instruction:
        session.observe_user(instruction)
    for earlier in said_before:
        firewall().check_said(firewall().said(earlier), harness="generic", session=session)
    said = firewall().said(text)
    found = firewall().check_said(said, harness="generic", session=session)
    return {finding.rule_id for finding in found if finding.rule_id in WORD_RULES}


def test_every_category_of_words_has_a_rule() -> None:
    categories = {
        yaml.safe_load((PACK / f"{rule}.yaml").read_text())["category"] for rule in WORD_RULES
    }
    assert categories >= {
        "special-casing",
        "state-toggle",
        "test-tampering",
        "early-exit",
        "report-forging",
        "introspection",
    }


@pytest.mark.parametrize(("rule", "text", "said_before", "instruction"), text_cases("ok"))
def test_an_honest_sentence_passes_every_word_rule(
    rule: str, text: str, said_before: tuple[str, ...], instruction: str
) -> None:
    assert word_findings(text, said_before, instruction) == set(), f"near-miss of {rule}"


@pytest.mark.parametrize(("rule", "text", "said_before", "instruction"), text_cases("match"))
def test_an_admission_reaches_its_own_rule(
    rule: str, text: str, said_before: tuple[str, ...], instruction: str
) -> None:
    assert rule in word_findings(text, said_before, instruction)


def test_an_admission_of_earlier_words_needs_them() -> None:
    assert "admitted-conflict-then-pass" not in word_findings("Done, pytest passes.")
    before = ("The fixture's 73 is wrong: the exhaustive search finds 70.",)
    assert "admitted-conflict-then-pass" in word_findings("Done, pytest passes.", before)


def test_the_battery_is_at_least_as_honest_as_it_is_damning() -> None:
    assert len(text_cases("ok")) >= len(text_cases("match"))
