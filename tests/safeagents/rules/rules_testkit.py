"""Shared helpers for the rule DSL tests (imported, not collected): writers, a fake registry."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from safeagents import Firewall
from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import Detector
from safeagents.rules import RuleSet

RULE_HEADER = {
    "category": "other",
    "severity": "high",
    "action": "reject",
    "description": "## What it does\nTest rule.",
    "message": "Blocked by safeagents ({rule}): {summary}.",
}


def write_rule(directory: Path, rule_id: str, match: Any, **fields: Any) -> Path:
    """Write ``directory/rule_id.yaml`` with a valid header plus ``match`` and ``fields``."""
    directory.mkdir(parents=True, exist_ok=True)
    body = {"id": rule_id, **RULE_HEADER, "match": match, **fields}
    path = directory / f"{rule_id}.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


def write_pack(directory: Path, name: str = "pack", **sections: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "pack.yaml"
    path.write_text(yaml.safe_dump({"name": name, "description": "d", **sections}))
    return path


class FakeRegistry:
    """Enough of ``Registry`` for tests: ``bash``, ``write`` and ``read`` tools."""

    def __init__(self, detectors: Mapping[str, Detector] | None = None) -> None:
        self.detectors: Mapping[str, Detector] = dict(detectors or {})
        self.calls: list[tuple[str, str]] = []

    def effects(self, call: ToolCall, harness: str, ctx: AnalysisContext) -> list[Effect]:
        self.calls.append((harness, call.name))
        arguments = call.arguments if isinstance(call.arguments, Mapping) else {}
        if call.name == "bash":
            command = str(arguments.get("command", ""))
            argv = tuple(shlex.split(command))
            if argv and argv[0] == "rm":
                targets = [a for a in argv[1:] if not a.startswith("-")]
                return [Effect("delete", path=ctx.resolve(t)) for t in targets]
            return [Effect("exec", argv0=argv[0] if argv else None, argv=argv, command=command)]
        if call.name == "write":
            path = ctx.resolve(str(arguments.get("path", "")))
            return [Effect("write", path=path, content=str(arguments.get("content", "")))]
        if call.name == "read":
            return [Effect("read", path=ctx.resolve(str(arguments.get("path", ""))))]
        return []

    def firewall(self, rules: RuleSet) -> Firewall:
        """A firewall of ``rules`` on this registry (the fixture runner's ``checker``)."""
        return Firewall(rules, self)  # type: ignore[arg-type]


class ContentDetector(Detector):
    """Matches writes whose content contains ``needle``."""

    name = "has-needle"

    def __init__(self, needle: str = "NEEDLE") -> None:
        self.needle = needle
        self.seen: list[Effect] = []

    def matches(self, effect: Effect, context: Any) -> bool:
        self.seen.append(effect)
        return self.needle in (effect.content or "")


class BrokenDetector(Detector):
    name = "broken"

    def matches(self, effect: Effect, context: Any) -> bool:
        raise RuntimeError("detector bug")
