"""The firewall: tool calls become effects through the plugin registry, effects become findings
through the rule engine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from safeagents._actions import AnalysisContext, ToolCall
from safeagents._detector import SessionState
from safeagents._registry import Registry, default_registry
from safeagents.rules import CallVerdict, Engine, RuleSet

__all__ = ["Firewall"]


class Firewall:
    """Checks tool calls against ``rules``, with the harnesses and detectors of ``registry``
    (the installed plugins' when ``None``)."""

    def __init__(self, rules: RuleSet, registry: Registry | None = None) -> None:
        self.registry = registry if registry is not None else default_registry()
        self.engine = Engine(rules, self.registry.detectors)

    @classmethod
    def load(
        cls,
        paths: Sequence[str | Path] | None = None,
        *,
        vars: Mapping[str, str | Sequence[str]] | None = None,
        registry: Registry | None = None,
    ) -> Firewall:
        """A firewall of the rules under ``paths`` (``None``: the bundled packs)."""
        return cls(RuleSet.load(paths, vars=vars), registry)

    @property
    def rules(self) -> RuleSet:
        return self.engine.rules

    def check_call(
        self,
        call: ToolCall,
        *,
        harness: str,
        context: AnalysisContext | None = None,
        session: SessionState | None = None,
    ) -> CallVerdict:
        """Turn ``call`` into effects per its harness and check them."""
        analysis = context if context is not None else AnalysisContext()
        effects = tuple(self.registry.effects(call, harness, analysis))
        findings = self.engine.check_effects(
            effects, call=call, harness=harness, context=analysis, session=session
        )
        return CallVerdict(call=call, harness=harness, effects=effects, findings=findings)
