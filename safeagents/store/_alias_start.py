"""What a proxy start's ``--model-alias`` flags change, on any backend: each alias keeps its
``origin``, ``'flags'`` (a start's flags) or ``'admin'`` (the admin API), and a start
changes only the aliases flags set (:meth:`Store.start_aliases
<safeagents.store.Store.start_aliases>`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["ADMIN", "FLAGS", "StartPlan", "plan_start"]

FLAGS, ADMIN = "flags", "admin"


@dataclass
class StartPlan:
    """The writes of one start: aliases to set (origin ``'flags'``), harnesses whose alias to
    delete, and the admin aliases kept that differ from a flag (harness -> stored model)."""

    set: dict[str, str] = field(default_factory=dict)
    delete: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)

    @property
    def changes(self) -> bool:
        return bool(self.set or self.delete)


def plan_start(stored: Mapping[str, tuple[str, str]], flags: Mapping[str, str]) -> StartPlan:
    """The plan for ``flags`` over the ``stored`` aliases (harness -> (model, origin))."""
    plan = StartPlan()
    plan.delete = sorted(
        h for h, (_, origin) in stored.items() if origin == FLAGS and h not in flags
    )
    for harness, model in flags.items():
        current = stored.get(harness)
        if current is not None and current[1] == ADMIN:
            if current[0] != model:
                plan.kept[harness] = current[0]
        elif current is None or current[0] != model:
            plan.set[harness] = model
    return plan
