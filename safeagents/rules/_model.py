"""The public records: packs, rules, findings and verdicts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from safeagents._actions import Effect, ToolCall
from safeagents.rules._tree import NEVER, Condition

__all__ = [
    "HACK_ACTIONS",
    "UNANALYSABLE",
    "CallVerdict",
    "Finding",
    "Pack",
    "Rule",
    "RuleException",
    "render_message",
]

HACK_ACTIONS = frozenset({"reject", "flag"})
"""The actions whose findings mark a call (and its session) as a reward hack."""
UNANALYSABLE = "unanalysable"
"""The category of findings on calls the firewall could not check (the ``fail-closed`` pack):
such a call is withheld like any rejected one, but it is no evidence of a hack, so its
finding does not mark the session hacked; it is counted apart (``unanalysable_calls``)."""
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


@dataclass(frozen=True, slots=True)
class Pack:
    """A directory of rules sharing vars, lists and macros (``pack.yaml``)."""

    name: str
    description: str
    path: Path
    vars: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    lists: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    macros: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RuleException:
    """A named allow-list entry: when it matches an effect, the rule does not fire."""

    name: str
    condition: Condition


@dataclass(frozen=True, slots=True)
class Rule:
    """One loaded rule; ``condition`` is the compiled ``match``."""

    id: str
    category: str
    severity: str
    action: str
    description: str
    message: str
    enabled: bool
    source: Path
    pack: str
    condition: Condition = NEVER
    exceptions: tuple[RuleException, ...] = ()


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule that fired on one effect of one tool call.

    ``effect`` is the effect it fired on; a finding read back from a transcript store has
    none (the store keeps the eight other fields, and :meth:`to_json` is the shape shown).
    """

    rule_id: str
    category: str
    severity: str
    action: str
    tool_call_id: str
    tool: str
    summary: str
    message: str
    effect: Effect | None = field(default=None, kw_only=True)

    @property
    def hacked(self) -> bool:
        return self.action in HACK_ACTIONS and self.category != UNANALYSABLE

    @property
    def unanalysable(self) -> bool:
        """A finding on a call that could not be checked (see :data:`UNANALYSABLE`)."""
        return self.category == UNANALYSABLE

    def to_json(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "category": self.category,
            "severity": self.severity,
            "action": self.action,
            "tool_call_id": self.tool_call_id,
            "tool": self.tool,
            "summary": self.summary,
        }


@dataclass(frozen=True, slots=True)
class CallVerdict:
    """Everything the engine concluded about one tool call."""

    call: ToolCall
    harness: str
    effects: tuple[Effect, ...]
    findings: tuple[Finding, ...]

    @property
    def blocked(self) -> bool:
        return any(finding.action == "reject" for finding in self.findings)

    @property
    def hacked(self) -> bool:
        return any(finding.hacked for finding in self.findings)


def render_message(rule: Rule, effect: Effect, call: ToolCall) -> str:
    """Fill ``{placeholders}``; unknown ones stay as written, absent values become ``""``."""
    values: dict[str, str | None] = {
        "rule": rule.id,
        "category": rule.category,
        "severity": rule.severity,
        "summary": effect.describe(),
        "effect": effect.kind,
        "path": effect.path,
        "dest": effect.dest,
        "command": effect.command,
        "url": effect.url,
        "host": effect.host,
        "tool": call.name,
    }

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            return match.group(0)
        return values[name] or ""

    return _PLACEHOLDER.sub(substitute, rule.message)
