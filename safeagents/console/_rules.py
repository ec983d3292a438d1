"""What the rules pages show: each loaded rule, its fixtures, and how often it fired."""

from __future__ import annotations

from typing import Any

import yaml

from safeagents.console._context import ConsoleSource
from safeagents.rules import FIXTURE_SUFFIX, Rule
from safeagents.store import RuleCount, SessionQuery

__all__ = ["fixtures", "rule_page", "rules_page"]


def fixtures(rule: Rule) -> list[dict[str, Any]]:
    """The cases of ``ID.test.yaml`` beside the rule (none if it has no readable file)."""
    path = rule.source.with_name(rule.id + FIXTURE_SUFFIX)
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return []
    cases = document.get("cases") if isinstance(document, dict) else None
    return [case for case in cases or () if isinstance(case, dict)]


async def rules_page(source: ConsoleSource) -> dict[str, Any]:
    counts = await source.store.rule_counts()
    rules = sorted(source.firewall.rules.rules, key=lambda rule: (rule.pack, rule.id))
    return {"rules": rules, "counts": counts, "empty": RuleCount("", 0, 0, 0)}


async def rule_page(source: ConsoleSource, rule_id: str) -> dict[str, Any] | None:
    try:
        rule = source.firewall.rules.get(rule_id)
    except KeyError:
        return None
    counts = await source.store.rule_counts()
    recent = await source.store.query_sessions(SessionQuery(rule=rule_id), limit=10)
    return {
        "rule": rule,
        "count": counts.get(rule_id, RuleCount(rule_id, 0, 0, 0)),
        "cases": fixtures(rule),
        "recent": recent,
    }
