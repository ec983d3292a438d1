"""The firewall: tool calls become effects through the plugin registry, effects become findings
through the rule engine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from safeagents._actions import AnalysisContext, Effect, ToolCall, said_effects, without_surrogates
from safeagents._detector import SessionState
from safeagents._impossible import Conflict
from safeagents._registry import Registry, default_registry
from safeagents.protocols import said_text
from safeagents.rules import CallVerdict, Engine, Finding, RuleSet

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
        said: Sequence[Effect] = (),
    ) -> CallVerdict:
        """Turn ``call`` into effects per its harness and check them; ``said`` is the text of
        its turn (:meth:`said`), which ``turn:`` conditions see. The analysers read the call
        without lone surrogates (:meth:`ToolCall.analysable`); the verdict keeps it whole."""
        analysis = context if context is not None else AnalysisContext()
        analysed = call.analysable()
        effects = tuple(self.registry.effects(analysed, harness, analysis))
        findings = self.engine.check_effects(
            effects, call=analysed, harness=harness, context=analysis, session=session, turn=said
        )
        return CallVerdict(call=call, harness=harness, effects=effects, findings=findings)

    def revealed(
        self,
        session: SessionState,
        *,
        harness: str,
        context: AnalysisContext | None = None,
        call: ToolCall | None = None,
    ) -> tuple[Finding, ...]:
        """Findings that became clear only after their calls ran: the session has since shown
        that a path the agent was taken to have created existed before it (see
        :meth:`SessionModel.take_revealed`), so the earlier deletes and moves of it are
        checked again (a whole-file write of it cannot be: what it replaced is unknown).
        Likewise an output that shows tests passing after the session showed them asserting
        one call equal to two different values (:meth:`SessionModel.take_impossible`): the
        call that output belongs to is checked again with that conflict known, and the
        findings the conflict adds are reported.
        They are reported with ``call``, the one whose output revealed it; they stop nothing.
        """
        findings: list[Finding] = []
        for path in session.model.take_revealed():
            earlier = [
                e
                for e in session.effects
                if e.kind in ("delete", "move") and path in (e.path, e.dest)
            ]
            if not earlier:
                continue
            found = self.engine.check_effects(
                earlier,
                call=call if call is not None else ToolCall("", ""),
                harness=harness,
                context=context,
                session=session.fork(),
            )
            note = f" (revealed later: {path} existed before the session)"
            findings.extend(replace(f, summary=f.summary + note) for f in found)
        revealing = call if call is not None else ToolCall("", "")
        for conflict in session.model.take_impossible():
            findings.extend(self._impossible_passed(conflict, session, harness, context, revealing))
        return tuple(findings)

    def _impossible_passed(
        self,
        conflict: Conflict,
        session: SessionState,
        harness: str,
        context: AnalysisContext | None,
        call: ToolCall,
    ) -> list[Finding]:
        """The findings that knowing ``conflict`` passed adds to the last call's effects."""
        last = session.effects[-1:]
        if not last:
            return []
        before = self.engine.check_effects(
            last, call=call, harness=harness, context=context, session=session.fork()
        )
        passed = session.fork()
        passed.model.passed_impossible = conflict
        found = self.engine.check_effects(
            last, call=call, harness=harness, context=context, session=passed
        )
        fired = {f.rule_id for f in before}
        note = f" (revealed later: the tests assert {conflict.describe()}, and they passed)"
        return [replace(f, summary=f.summary + note) for f in found if f.rule_id not in fired]

    @staticmethod
    def message_text(message: Mapping[str, Any]) -> str:
        """What an assistant chat message says in its own words: reasoning, then content."""
        return said_text(message)

    @staticmethod
    def said(text: str) -> tuple[Effect, ...]:
        """The ``say`` effects of a turn's text (content and reasoning), one per sentence."""
        return said_effects(without_surrogates(text))

    def check_said(
        self,
        said: Sequence[Effect],
        *,
        calls: Sequence[CallVerdict] = (),
        harness: str,
        context: AnalysisContext | None = None,
        session: SessionState | None = None,
    ) -> tuple[Finding, ...]:
        """Findings on a turn's text, whose ``turn:`` conditions see the turn's ``calls``;
        ``session`` then remembers what the text said for ``said_earlier:`` conditions.

        Their ``tool_call_id`` is empty: they belong to the turn, whose calls they stop."""
        if not said:
            return ()
        turn = tuple(effect for verdict in calls for effect in verdict.effects)
        return self.engine.check_said(
            said, turn=turn, harness=harness, context=context, session=session
        )

    def remember_said(
        self,
        text: str,
        *,
        harness: str,
        context: AnalysisContext | None = None,
        session: SessionState,
    ) -> None:
        """Remember in ``session`` what an earlier turn's ``text`` said, for ``said_earlier:``
        conditions, without checking it (it was checked when it was said)."""
        said = self.said(text)
        self.engine.remember_said(said, harness=harness, context=context, session=session)

    def check_turn(
        self,
        calls: Sequence[ToolCall],
        *,
        text: str,
        harness: str,
        context: AnalysisContext | None = None,
        session: SessionState | None = None,
    ) -> tuple[list[CallVerdict], tuple[Finding, ...]]:
        """Check one model turn: every tool call, then its text; the findings on the text
        come apart (a ``reject`` among them stops every call of the turn)."""
        said = self.said(text)
        verdicts = [
            self.check_call(call, harness=harness, context=context, session=session, said=said)
            for call in calls
        ]
        spoken = self.check_said(
            said, calls=verdicts, harness=harness, context=context, session=session
        )
        return verdicts, spoken
