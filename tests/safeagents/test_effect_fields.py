"""``EFFECT_FIELDS`` is what the analysers produce: no effect carries a field its kind omits."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
import yaml

from safeagents._actions import (
    EFFECT_FIELDS,
    EFFECT_KINDS,
    FIELD_DOCS,
    AnalysisContext,
    Effect,
    ToolCall,
    said_effects,
)
from safeagents._registry import default_registry

ROOT = Path(__file__).resolve().parents[2]
CASES = [
    case
    for fixture in sorted((ROOT / "rules").glob("*/*.test.yaml"))
    for case in yaml.safe_load(fixture.read_text())["cases"]
    if case.get("tool")  # a case of text alone makes no call
]
EXTRA = [  # kinds and fields the fixtures may not reach
    ("pi", "bash", {"command": "sed -i 's/a/b/' x.py && perl -pi -e 's/a/b/' y.py"}),
    ("pi", "bash", {"command": "mv a b; curl -o out https://x.test/f; git clone https://h/r"}),
    ("pi", "bash", {"command": "grep -r needle src; find . -name '*.py' -delete"}),
    ("pi", "bash", {"command": 'eval "$(echo cm0gLXJmIC8= | base64 -d)"'}),
    ("claude-code", "WebSearch", {"query": "the answer to task 12"}),
    ("claude-code", "WebFetch", {"url": "https://example.com/solution"}),
]


def carried(effect: Effect) -> set[str]:
    empty = Effect(effect.kind)
    return {
        f.name
        for f in fields(Effect)
        if f.name != "kind" and getattr(effect, f.name) != getattr(empty, f.name)
    }


def test_every_kind_and_field_is_declared_and_documented() -> None:
    assert set(EFFECT_FIELDS) == set(EFFECT_KINDS)
    declared = {field for names in EFFECT_FIELDS.values() for field in names}
    assert declared == set(FIELD_DOCS) == {f.name for f in fields(Effect)} - {"kind"}


@pytest.mark.parametrize(
    "harness, tool, arguments",
    EXTRA + [(case["harness"], case["tool"], case.get("arguments", {})) for case in CASES],
)
def test_effects_carry_only_their_kinds_fields(harness: str, tool: str, arguments: Any) -> None:
    call = ToolCall("c", tool, arguments)
    for effect in default_registry().effects(call, harness, AnalysisContext()):
        stray = carried(effect) - set(EFFECT_FIELDS[effect.kind])
        assert not stray, f"{effect.kind} carries {stray}: {effect}"


def test_said_effects_carry_only_their_text() -> None:
    said = said_effects("I fixed it. It passes.")
    assert [carried(effect) for effect in said] == [{"text"}, {"text"}]


def test_the_extra_calls_reach_every_declared_field() -> None:
    seen: dict[str, set[str]] = {kind: set() for kind in EFFECT_KINDS}
    for harness, tool, arguments in EXTRA + [
        (c["harness"], c["tool"], c.get("arguments", {})) for c in CASES
    ]:
        for effect in default_registry().effects(
            ToolCall("c", tool, arguments), harness, AnalysisContext()
        ):
            seen[effect.kind] |= carried(effect)
    for effect in said_effects("The model's own words. Another sentence."):
        seen[effect.kind] |= carried(effect)
    unreached = {kind: set(EFFECT_FIELDS[kind]) - seen[kind] for kind in EFFECT_KINDS}
    assert {kind: missing for kind, missing in unreached.items() if missing} == {}
