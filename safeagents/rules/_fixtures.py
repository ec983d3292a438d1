"""Running each rule's fixture cases (``ID.test.yaml``) through a full call checker."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import SessionState
from safeagents._harness import Harness
from safeagents.rules._discover import FIXTURE_SUFFIX
from safeagents.rules._errors import ErrorSink, RuleError, RuleLoadError
from safeagents.rules._loader import RuleSet, normalise_vars
from safeagents.rules._model import CallVerdict, Finding, Rule
from safeagents.rules._schema import FixtureCaseModel, FixtureFileModel, show, validate
from safeagents.rules._yaml import Document, NodePath, load_document

__all__ = ["CallChecker", "FixtureResult", "run_fixtures"]

GENERIC = "generic"
"""The harness that reads any tool call (the fallback of the others)."""


class CallChecker(Protocol):
    """Tool calls in, verdicts out (:class:`safeagents.Firewall` is one)."""

    def check_call(
        self,
        call: ToolCall,
        *,
        harness: str,
        context: AnalysisContext | None = None,
        session: SessionState | None = None,
    ) -> CallVerdict: ...

    def check_turn(
        self,
        calls: Sequence[ToolCall],
        *,
        text: str,
        harness: str,
        context: AnalysisContext | None = None,
        session: SessionState | None = None,
    ) -> tuple[list[CallVerdict], tuple[Finding, ...]]: ...

    def revealed(
        self,
        session: SessionState,
        *,
        harness: str,
        context: AnalysisContext | None = None,
        call: ToolCall | None = None,
    ) -> tuple[Finding, ...]: ...


@dataclass(frozen=True, slots=True)
class FixtureResult:
    """The outcome of one fixture case; ``source`` is ``file:line`` of the case."""

    rule_id: str
    case: str
    expected: str
    passed: bool
    detail: str
    source: str
    harness: str = ""
    """The harness schema the case is written in (its canonical name when it was checked)."""

    @property
    def todo(self) -> bool:
        return self.expected.startswith("todo-")


def run_fixtures(
    paths: Sequence[str | Path] | None = None,
    *,
    checker: Callable[[RuleSet], CallChecker],
    harness: Callable[[str], Harness] | None = None,
    min_cases: int = 0,
    exclude: Collection[str] = (),
) -> list[FixtureResult]:
    """Run the fixtures of every rule under ``paths`` (``None``: the bundled packs).

    ``checker`` builds what checks the calls of a rule set, as ``safeagents.Firewall`` does;
    it is given the whole set first, so it can reject what no case would get to. A rule
    without an ``ID.test.yaml`` is a failed result. With ``harness`` (a registry's lookup,
    raising :class:`ValueError` for an unknown name) a case's ``harness`` must exist and its
    tools must be that harness's own, not calls only the generic fallback would read. With
    ``min_cases``, each rule needs that many ``match`` and ``ok`` cases, written in that many
    harness schemas. The rules ``exclude`` names are neither loaded nor tested."""
    rules = RuleSet.load(paths, exclude=exclude)
    checker(rules)  # the whole set must build (detector names)
    runner = _Runner(rules, checker, harness)
    results: list[FixtureResult] = []
    for rule in rules.rules:
        fixture = rule.source.with_name(rule.id + FIXTURE_SUFFIX)
        if not fixture.is_file():
            detail = f"no fixtures: write {fixture.name} beside the rule"
            results.append(FixtureResult(rule.id, "fixtures", "", False, detail, str(rule.source)))
            continue
        ran = runner.run_file(rule, fixture)
        results.extend(ran)
        shortfall = _shortfall(ran, min_cases)
        if shortfall:
            results.append(FixtureResult(rule.id, "coverage", "", False, shortfall, str(fixture)))
    runner.check_orphans()
    runner.sink.raise_if_any()
    return results


def _shortfall(results: Sequence[FixtureResult], needed: int) -> str:
    """What ``results`` lack of ``needed`` match and ok cases over ``needed`` harnesses."""
    if needed <= 0:
        return ""
    lacking = []
    for expected in ("match", "ok"):
        count = sum(result.expected == expected for result in results)
        if count < needed:
            lacking.append(f"{count} '{expected}' case(s)")
    schemas = {result.harness for result in results}
    if len(schemas) < needed:
        lacking.append(f"{len(schemas)} harness schema(s) ({', '.join(sorted(schemas))})")
    if not lacking:
        return ""
    return f"{', '.join(lacking)}; each rule needs {needed} of each (--min-cases relaxes this)"


class _Runner:
    def __init__(
        self,
        rules: RuleSet,
        checker: Callable[[RuleSet], CallChecker],
        harness: Callable[[str], Harness] | None,
    ) -> None:
        self.rules = rules
        self.checker = checker
        self.harness = harness
        self.sink = ErrorSink()
        self._checkers: dict[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], CallChecker] = {}

    def run_file(self, rule: Rule, fixture: Path) -> list[FixtureResult]:
        try:
            document, errors = load_document(fixture)
        except RuleError as error:
            self.sink.add(error)
            return []
        self.sink.extend(errors)
        model, errors = validate(FixtureFileModel, document)
        self.sink.extend(errors)
        if model is None:
            return []
        results = []
        for index, case in enumerate(model.cases):
            path: NodePath = ("cases", index)
            schema = self._schema(document, case, path)
            if self._case_is_valid(document, case, path) and schema is not None:
                line, _ = document.position(path)
                results.append(self._run_case(rule, case, f"{document.file}:{line}", schema))
        return results

    def check_orphans(self) -> None:
        directories = {rule.source.parent for rule in self.rules.rules}
        for directory in sorted(directories):
            for fixture in sorted(directory.glob("*" + FIXTURE_SUFFIX)):
                rule_file = fixture.with_name(fixture.name.removesuffix(FIXTURE_SUFFIX) + ".yaml")
                if not rule_file.is_file():
                    message = f"fixture file without a rule (expected {rule_file.name} beside it)"
                    self.sink.add(RuleError(str(fixture), 0, 0, message))

    def _schema(self, document: Document, case: FixtureCaseModel, path: NodePath) -> str | None:
        """The case's harness by its canonical name; ``None`` (an error) when it is unknown or
        a tool of the case is not one of its own."""
        if self.harness is None:
            return case.harness
        try:
            plugin = self.harness(case.harness)
        except ValueError as exc:
            self.sink.add(document.error((*path, "harness"), str(exc)))
            return None
        calls: list[tuple[str, Any, NodePath]] = []
        if case.tool:  # a turn of text alone has no call
            calls.append((case.tool, case.arguments, (*path, "tool")))
        for index, entry in enumerate(case.history):
            calls.append((entry.tool, entry.arguments, (*path, "history", index, "tool")))
        try:
            generic: Harness | None = self.harness(GENERIC)
        except ValueError:
            generic = None
        known = True
        for tool, arguments, at in calls:
            problem = _foreign(plugin, generic, ToolCall("fixture", tool, arguments), case.cwd)
            if problem is not None:
                self.sink.add(document.error(at, problem))
                known = False
        return plugin.name if known else None

    def _case_is_valid(self, document: Document, case: FixtureCaseModel, path: NodePath) -> bool:
        valid = True
        if not case.tool and not case.text:
            self.sink.add(document.error(path, "a case needs a tool call (tool), text, or both"))
            valid = False
        arguments: list[tuple[Any, NodePath]] = [(case.arguments, (*path, "arguments"))]
        for index, entry in enumerate(case.history):
            arguments.append((entry.arguments, (*path, "history", index, "arguments")))
        for value, at in arguments:
            if not isinstance(value, (dict, str)):
                message = f"arguments: expected a mapping or text, got {show(value)}"
                self.sink.add(document.error(at, message))
                valid = False
        for name, value in case.vars.items():
            if not (isinstance(value, str) or _is_text_list(value)):
                message = f"vars.{name}: expected text or a list of text, got {show(value)}"
                self.sink.add(document.error((*path, "vars", name), message))
                valid = False
        return valid

    def _run_case(
        self, rule: Rule, case: FixtureCaseModel, source: str, schema: str
    ) -> FixtureResult:
        def result(passed: bool, detail: str) -> FixtureResult:
            return FixtureResult(rule.id, case.name, case.expect, passed, detail, source, schema)

        try:
            checker = self._checker(rule, case.vars)
        except RuleLoadError as exc:
            return result(False, f"cannot load the rule with this case's vars: {exc}")
        context = AnalysisContext(cwd=case.cwd)
        session = SessionState()
        if case.instruction:
            session.observe_user(case.instruction)
        late: list[Finding] = []
        for text in case.said_before:
            checker.check_turn(
                [], text=text, harness=case.harness, context=context, session=session
            )
        for index, entry in enumerate(case.history):
            earlier = ToolCall(f"history-{index}", entry.tool, entry.arguments)
            checker.check_call(earlier, harness=case.harness, context=context, session=session)
            session.observe_output(entry.output)
            late.extend(
                checker.revealed(session, harness=case.harness, context=context, call=earlier)
            )
        calls: list[ToolCall] = []
        if case.arguments_json is not None:
            raw = {"id": "fixture", "name": case.tool, "arguments": case.arguments_json}
            calls.append(ToolCall.from_openai(raw))
        elif case.tool:
            calls.append(ToolCall("fixture", case.tool, case.arguments))
        verdicts, spoken = checker.check_turn(
            calls, text=case.text, harness=case.harness, context=context, session=session
        )
        findings = [*late, *(f for verdict in verdicts for f in verdict.findings), *spoken]
        hits = [finding for finding in findings if finding.rule_id == rule.id]
        want_match = case.expect in ("match", "todo-match")
        if hits:
            outcome = f"matched: {hits[0].summary}"
        else:
            described = [effect.describe() for verdict in verdicts for effect in verdict.effects]
            outcome = f"no finding (effects: {'; '.join(described) or 'none'})"
        correct = bool(hits) == want_match
        if case.expect.startswith("todo-"):
            note = "todo now passes; change expect to " if correct else "known gap: "
            return result(True, note + (case.expect.removeprefix("todo-") if correct else outcome))
        if correct:
            return result(True, outcome)
        wanted = "expected a finding" if want_match else "expected no finding"
        return result(False, f"{wanted}, but {outcome}")

    def _checker(self, rule: Rule, overrides: Mapping[str, Any]) -> CallChecker:
        frozen = tuple(sorted(normalise_vars(overrides).items()))
        key = (rule.id, frozen)
        if key not in self._checkers:
            rules = self.rules
            if overrides:
                rules = RuleSet.load([rule.source], vars=dict(frozen))
            self._checkers[key] = self.checker(rules.select([rule.id], enable=True))
        return self._checkers[key]


def _foreign(plugin: Harness, generic: Harness | None, call: ToolCall, cwd: str) -> str | None:
    """Why ``call`` is not written in ``plugin``'s schema: a tool it does not have, or arguments
    it reads nothing from where the generic fallback reads effects (another harness's field
    names); ``None`` when it is."""
    context = AnalysisContext(cwd=cwd)
    own = _effects(plugin, call, context)
    name = plugin.name
    if own is None:
        tools = ", ".join(sorted(plugin.tools)) or "none declared"
        return (
            f"'{call.name}' is not a {name} tool ({name}'s tools: {tools}), so only the generic "
            f"fallback would read it: write the call in {name}'s schema, or say harness: generic"
        )
    if own or generic is None or generic is plugin or not isinstance(call.arguments, Mapping):
        return None
    fallback = _effects(generic, call, context)
    if not fallback or not call.arguments:
        return None
    fields = ", ".join(sorted(call.arguments))
    return (
        f"{name}'s '{call.name}' reads nothing from these arguments ({fields}) where the generic "
        f"fallback reads '{fallback[0].describe()}': are they another harness's field names?"
    )


def _effects(plugin: Harness, call: ToolCall, context: AnalysisContext) -> list[Effect] | None:
    try:
        return plugin.effects(call, context)
    except Exception:  # the plugin knows the tool but not these arguments: the run says more
        return []


def _is_text_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
