"""Helpers shared by the shell analyser tests: partial effect matching."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis._shell import analyze_shell

CTX = AnalysisContext(cwd="/workspace", home="/root")


def E(kind: str, **fields: Any) -> dict[str, Any]:
    """An expected effect: only the given fields are compared."""
    return {"kind": kind, **fields}


@dataclass(frozen=True)
class Case:
    script: str
    expect: tuple[dict[str, Any], ...]
    absent: tuple[dict[str, Any], ...] = field(default=())
    id: str = ""


def case(
    script: str, *expect: dict[str, Any], absent: tuple[dict[str, Any], ...] = (), id: str = ""
) -> Case:
    return Case(script, expect, absent, id or script[:60])


def matches(effect: Effect, wanted: dict[str, Any]) -> bool:
    return all(getattr(effect, name) == value for name, value in wanted.items())


def check(item: Case) -> list[Effect]:
    effects = analyze_shell(item.script, CTX)
    for wanted in item.expect:
        assert any(matches(effect, wanted) for effect in effects), (
            f"missing {wanted} in\n" + "\n".join(map(repr, effects))
        )
    for unwanted in item.absent:
        assert not any(matches(effect, unwanted) for effect in effects), (
            f"unexpected {unwanted} in\n" + "\n".join(map(repr, effects))
        )
    return effects
