"""Matching: effects against compiled rules, with the RE2 prefilter choosing candidates."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from safeagents._actions import EFFECT_KINDS, AnalysisContext, Effect, ToolCall
from safeagents._detector import CallContext, Detector, SessionState
from safeagents.rules._compile import PatternBank
from safeagents.rules._loader import RuleSet
from safeagents.rules._model import UNANALYSABLE, Finding, Rule, render_message
from safeagents.rules._paths import list_matcher
from safeagents.rules._plan import Gate, KindPlan, kind_plans, required_hits
from safeagents.rules._tree import Condition, SaidEarlier, Value, said_earlier_tests

__all__ = ["Engine"]

logger = logging.getLogger("safeagents.rules")
_NO_DETECTORS: Mapping[str, Detector] = MappingProxyType({})


class Engine:
    """Matches effects against a :class:`RuleSet`, calling the ``detectors`` rules name.

    Every detector the rules call must be in ``detectors`` (a :class:`RuleLoadError` says
    where one is not). Turning tool calls into effects is :class:`safeagents.Firewall`'s part.
    """

    def __init__(self, rules: RuleSet, detectors: Mapping[str, Detector] = _NO_DETECTORS) -> None:
        rules.check_detectors(detectors)
        self.rules = rules
        self.detectors = detectors
        self._bank: PatternBank = rules.pattern_bank
        self._active: list[Rule] = [rule for rule in rules.rules if rule.enabled]
        self._plans: dict[str | None, KindPlan] = kind_plans([r.condition for r in self._active])
        self._test_path = list_matcher(rules.packs, "test_files")
        self._said_earlier: dict[str | None, tuple[tuple[SaidEarlier, Gate], ...]] = (
            _said_earlier_plans(self._active)
        )

    def remember_said(
        self,
        said: Sequence[Effect],
        *,
        harness: str,
        context: AnalysisContext | None = None,
        session: SessionState,
    ) -> None:
        """Marks in ``session`` each ``said_earlier:`` condition a sentence of ``said`` meets,
        for the turns after this one; each sentence costs one test per such condition (a
        pattern scan when its patterns miss). The turn's sentences become
        ``session.previous_said``."""
        self._remember(tuple(said), harness, context, session, None)

    def check_said(
        self,
        said: Sequence[Effect],
        *,
        turn: Sequence[Effect],
        harness: str,
        context: AnalysisContext | None = None,
        session: SessionState | None = None,
    ) -> tuple[Finding, ...]:
        """:meth:`check_effects` of a turn's ``say`` effects, not recorded, then
        :meth:`remember_said` of them in ``session`` (when given), which reads the pattern
        scans of the check."""
        said = tuple(said)
        opened: list[tuple[SaidEarlier, ...]] | None = [] if session is not None else None
        call = ToolCall("", "")
        findings = self._check(said, call, harness, context, session, turn, False, opened)
        if session is not None:
            self._remember(said, harness, context, session, opened)
        return findings

    def _opened(self, view: _EffectView) -> tuple[SaidEarlier, ...]:
        """The ``said_earlier:`` conditions whose pattern hits ``view`` has."""
        plans = self._said_earlier
        tests = plans.get(view.effect.kind, plans.get(None, ()))
        return tuple(test for test, gate in tests if gate.open(view))

    def _remember(
        self,
        said: tuple[Effect, ...],
        harness: str,
        context: AnalysisContext | None,
        session: SessionState,
        opened: Sequence[tuple[SaidEarlier, ...]] | None,
    ) -> None:
        sentences = tuple(effect.text for effect in said if effect.kind == "say" and effect.text)
        if sentences:
            session.previous_said = sentences
        if not self._said_earlier or not said:
            return
        call_context = CallContext(
            call=ToolCall("", ""),
            harness=harness,
            analysis=context if context is not None else AnalysisContext(),
            session=session,
            effects=said,
            is_test_path=self._test_path,
        )
        marks = session.said_marks
        probe = _Probe()
        for position, effect in enumerate(said):
            if opened is not None and not opened[position]:
                continue
            view = _EffectView(effect, call_context, self._bank, self.detectors, None, probe)
            for test in opened[position] if opened is not None else self._opened(view):
                if test.key in marks:
                    continue
                probe.failed = None
                if test.condition.holds(view):
                    marks.add(test.key)
                    session.said_undecided.pop(test.key, None)
                elif probe.failed is not None:
                    session.said_undecided.setdefault(test.key, probe.failed)

    def check_effects(
        self,
        effects: Iterable[Effect],
        *,
        call: ToolCall,
        harness: str,
        context: AnalysisContext | None = None,
        session: SessionState | None = None,
        turn: Sequence[Effect] = (),
        record: bool = True,
    ) -> tuple[Finding, ...]:
        """Findings for ``effects`` of ``call``: per rule, the first effect it matches.

        ``turn`` is what ``turn:`` conditions look at besides ``effects`` themselves: the
        other effects of the same model turn. ``record`` adds ``effects`` to ``session``."""
        return self._check(tuple(effects), call, harness, context, session, turn, record, None)

    def _check(
        self,
        effects: tuple[Effect, ...],
        call: ToolCall,
        harness: str,
        context: AnalysisContext | None,
        session: SessionState | None,
        turn: Sequence[Effect],
        record: bool,
        opened: list[tuple[SaidEarlier, ...]] | None,
    ) -> tuple[Finding, ...]:
        """:meth:`check_effects`; ``opened`` receives :meth:`_opened` of each effect."""
        state = session if session is not None else SessionState()
        analysis = context if context is not None else AnalysisContext()
        if record:
            state.model.begin_call(analysis.cwd)
        call_context = CallContext(
            call=call,
            harness=harness,
            analysis=analysis,
            session=state,
            effects=effects,
            is_test_path=self._test_path,
            said=tuple(effect.text for effect in turn if effect.kind == "say" and effect.text),
        )
        fired: set[int] = set()
        undecided: set[int] = set()
        findings: list[Finding] = []
        probe = _Probe()
        neighbours = _Turn((*effects, *turn), call_context, self._bank, self.detectors, probe)
        for effect in effects:
            view = _EffectView(effect, call_context, self._bank, self.detectors, neighbours, probe)
            if opened is not None:
                opened.append(self._opened(view))
            plan = self._plans.get(effect.kind, self._plans[None])
            for index in plan.candidates(view):
                if index in fired:
                    continue
                rule = self._active[index]
                probe.failed = None
                if rule.condition.holds(view):
                    probe.failed = None
                    if any(exception.condition.holds(view) for exception in rule.exceptions):
                        continue
                elif probe.failed is None:
                    continue
                if probe.failed is None:
                    fired.add(index)
                    findings.append(_finding(rule, effect, call))
                elif index not in undecided:
                    undecided.add(index)
                    findings.append(_undecided(rule, effect, call, probe.failed))
            if record:
                state.model.observe_effect(effect)
        if session is not None and record:
            session.effects.extend(effects)
        return tuple(findings)


def _said_earlier_plans(
    rules: Sequence[Rule],
) -> dict[str | None, tuple[tuple[SaidEarlier, Gate], ...]]:
    """Per effect kind, the ``said_earlier:`` conditions of ``rules`` one of its effects can
    meet, each with the pattern hits it needs; empty when ``rules`` have none."""
    tests = {
        test.key: test
        for rule in rules
        for condition in (rule.condition, *(e.condition for e in rule.exceptions))
        for test in said_earlier_tests(condition)
    }
    if not tests:
        return {}
    plans: dict[str | None, tuple[tuple[SaidEarlier, Gate], ...]] = {}
    for kind in (*EFFECT_KINDS, None):
        needs = ((test, required_hits(test.condition, kind)) for test in tests.values())
        plans[kind] = tuple((test, Gate.of(c)) for test, c in needs if c is not None)
    return plans


def _finding(rule: Rule, effect: Effect, call: ToolCall) -> Finding:
    return Finding(
        rule_id=rule.id,
        category=rule.category,
        severity=rule.severity,
        action=rule.action,
        tool_call_id=call.id,
        tool=call.name,
        summary=effect.describe(),
        message=render_message(rule, effect, call),
        effect=effect,
    )


def _undecided(rule: Rule, effect: Effect, call: ToolCall, detector: str) -> Finding:
    """The finding of a rule whose verdict rested on a detector that raised: the call is
    treated as the rule says of a match (fail closed), but as unanalysable, not as a hack."""
    return Finding(
        rule_id=rule.id,
        category=UNANALYSABLE,
        severity=rule.severity,
        action=rule.action,
        tool_call_id=call.id,
        tool=call.name,
        summary=f"{effect.describe()} (not checked: detector {detector!r} failed on it)",
        message=(
            f"Blocked by safeagents ({rule.id}): this call could not be checked (the "
            f"{detector!r} check failed on it), so it was not run. Issue it again in a "
            "simpler form: one step per call, a long program written to a file first."
        ),
        effect=effect,
    )


class _Probe:
    """Set by a view when a rule's evaluation consulted a detector that raised."""

    __slots__ = ("failed",)

    def __init__(self) -> None:
        self.failed: str | None = None


class _Turn:
    """The effects of one model turn, viewed lazily once for all ``turn:`` conditions."""

    __slots__ = ("_args", "_effects", "_met", "_probe", "_views")

    def __init__(
        self,
        effects: tuple[Effect, ...],
        context: CallContext,
        bank: PatternBank,
        detectors: Mapping[str, Detector],
        probe: _Probe,
    ) -> None:
        self._effects = effects
        self._args = (context, bank, detectors)
        self._probe = probe
        self._views: list[_EffectView] | None = None
        self._met: dict[int, list[tuple[Effect, bool, str | None]]] = {}

    def _all(self) -> list[_EffectView]:
        if self._views is None:
            self._views = [_EffectView(e, *self._args, None, self._probe) for e in self._effects]
        return self._views

    def others_meet(self, effect: Effect, condition: Condition) -> bool:
        """Whether an effect of the turn other than ``effect`` satisfies ``condition``; each
        condition is tested once per effect of the turn, whichever effect asks. When none
        does and testing one of them consulted a failed detector, the probe says so."""
        outcomes = self._met.get(id(condition))  # the rules own their conditions: stable ids
        probe = self._probe
        if outcomes is None:
            before, outcomes = probe.failed, []
            for view in self._all():
                probe.failed = None
                outcomes.append((view.effect, condition.holds(view), probe.failed))
            probe.failed = before
            self._met[id(condition)] = outcomes
        others = [(held, failed) for other, held, failed in outcomes if other is not effect]
        if any(held for held, _ in others):
            return True
        failed = next((failed for _, failed in others if failed is not None), None)
        if failed is not None and probe.failed is None:
            probe.failed = failed
        return False


class _EffectView:
    """One effect as conditions see it; pattern scans and detector calls are cached."""

    __slots__ = (
        "_bank",
        "_bits",
        "_detected",
        "_detectors",
        "_failed",
        "_hits",
        "_probe",
        "_turn",
        "_values",
        "context",
        "effect",
    )

    def __init__(
        self,
        effect: Effect,
        context: CallContext,
        bank: PatternBank,
        detectors: Mapping[str, Detector],
        turn: _Turn | None,
        probe: _Probe,
    ) -> None:
        self.effect = effect
        self.context = context
        self._bank = bank
        self._detectors = detectors
        self._turn = turn
        self._values: dict[str, tuple[Value, ...]] = {}
        self._bits: dict[tuple[str, int], frozenset[int]] = {}
        self._hits: dict[str, frozenset[int]] = {}
        self._detected: dict[str, bool] = {}
        self._failed: set[str] = set()
        self._probe = probe

    def values(self, field: str) -> tuple[Value, ...]:
        cached = self._values.get(field)
        if cached is None:
            cached = self._values[field] = self._read(field)
        return cached

    def _read(self, field: str) -> tuple[Value, ...]:
        if field == "effect":
            return (self.effect.kind,)
        if field == "tool":
            return (self.context.call.name,)
        if field == "harness":
            return (self.context.harness,)
        if field == "argv":
            return tuple(self.effect.argv)
        if field == "instruction":
            instruction = self.context.session.model.instruction
            return (instruction,) if instruction else ()
        value = getattr(self.effect, field)
        return () if value is None else (value,)

    def bits(self, field: str, position: int) -> frozenset[int]:
        key = (field, position)
        cached = self._bits.get(key)
        if cached is None:
            value = self.values(field)[position]
            text = value if isinstance(value, str) else str(value)
            cached = self._bits[key] = self._bank.scan(field, text)
        return cached

    def hits(self, field: str) -> frozenset[int]:
        """Pattern indices any value of ``field`` matches."""
        cached = self._hits.get(field)
        if cached is None:
            count = len(self.values(field))
            if count == 1:
                cached = self.bits(field, 0)
            else:
                cached = frozenset().union(*(self.bits(field, i) for i in range(count)))
            self._hits[field] = cached
        return cached

    def turn_meets(self, condition: Condition) -> bool:
        """A view inside a ``turn:`` has no turn of its own (no nesting)."""
        return self._turn is not None and self._turn.others_meet(self.effect, condition)

    def said_earlier(self, key: str) -> bool:
        session = self.context.session
        if key in session.said_marks:
            return True
        failed = session.said_undecided.get(key)
        if failed is not None:
            self._probe.failed = failed
        return False

    def session_fact(self, name: str) -> bool:
        path = self.effect.path
        if path is None:
            return False
        model = self.context.session.model
        if name == "agent-created":
            return model.created(path)
        if name == "creates-file":
            return model.creates(self.effect)
        if name == "pre-existing":
            return model.preexisting(path)
        if name == "seen-existing":
            return model.seen_existing(path)
        if name == "named-in-instruction":
            return model.named_in_instruction(path)
        if name == "in-working-directory":
            return model.in_working_directory(path, self.context.analysis.cwd)
        return model.is_task_test(path, self.context.is_test_path(path))

    def detector(self, name: str) -> bool:
        if name not in self._detected:
            self._detected[name] = self._run_detector(name)
        if name in self._failed:
            self._probe.failed = name
        return self._detected[name]

    def _run_detector(self, name: str) -> bool:
        detector = self._detectors.get(name)
        if detector is None:
            return False
        try:
            return bool(detector.matches(self.effect, self.context))
        except Exception:
            logger.exception(
                "detector %r raised on %s; the call counts as unanalysable", name, self.effect
            )
            self._failed.add(name)
            return False
