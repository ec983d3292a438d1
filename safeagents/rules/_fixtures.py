"""Running each rule's fixture cases (``ID.test.yaml``) through a full call checker."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from safeagents._actions import AnalysisContext, ToolCall
from safeagents._detector import SessionState
from safeagents.rules._discover import FIXTURE_SUFFIX
from safeagents.rules._errors import ErrorSink, RuleError, RuleLoadError
from safeagents.rules._loader import RuleSet, normalise_vars
from safeagents.rules._model import CallVerdict, Finding, Rule
from safeagents.rules._schema import FixtureCaseModel, FixtureFileModel, show, validate
from safeagents.rules._yaml import Document, NodePath, load_document

__all__ = ["CallChecker", "FixtureResult", "run_fixtures"]


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


@dataclass(frozen=True, slots=True)
class FixtureResult:
    """The outcome of one fixture case; ``source`` is ``file:line`` of the case."""

    rule_id: str
    case: str
    expected: str
    passed: bool
    detail: str
    source: str

    @property
    def todo(self) -> bool:
        return self.expected.startswith("todo-")


def run_fixtures(
    paths: Sequence[str | Path] | None = None, *, checker: Callable[[RuleSet], CallChecker]
) -> list[FixtureResult]:
    """Run the fixtures of every rule under ``paths`` (``None``: the bundled packs).

    ``checker`` builds what checks the calls of a rule set, as ``safeagents.Firewall`` does;
    it is given the whole set first, so it can reject what no case would get to."""
    rules = RuleSet.load(paths)
    checker(rules)  # the whole set must build (detector names)
    runner = _Runner(rules, checker)
    results: list[FixtureResult] = []
    for rule in rules.rules:
        fixture = rule.source.with_name(rule.id + FIXTURE_SUFFIX)
        if fixture.is_file():
            results.extend(runner.run_file(rule, fixture))
    runner.check_orphans()
    runner.sink.raise_if_any()
    return results


class _Runner:
    def __init__(self, rules: RuleSet, checker: Callable[[RuleSet], CallChecker]) -> None:
        self.rules = rules
        self.checker = checker
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
            if self._case_is_valid(document, case, path):
                line, _ = document.position(path)
                results.append(self._run_case(rule, case, f"{document.file}:{line}"))
        return results

    def check_orphans(self) -> None:
        directories = {rule.source.parent for rule in self.rules.rules}
        for directory in sorted(directories):
            for fixture in sorted(directory.glob("*" + FIXTURE_SUFFIX)):
                rule_file = fixture.with_name(fixture.name.removesuffix(FIXTURE_SUFFIX) + ".yaml")
                if not rule_file.is_file():
                    message = f"fixture file without a rule (expected {rule_file.name} beside it)"
                    self.sink.add(RuleError(str(fixture), 0, 0, message))

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

    def _run_case(self, rule: Rule, case: FixtureCaseModel, source: str) -> FixtureResult:
        def result(passed: bool, detail: str) -> FixtureResult:
            return FixtureResult(rule.id, case.name, case.expect, passed, detail, source)

        try:
            checker = self._checker(rule, case.vars)
        except RuleLoadError as exc:
            return result(False, f"cannot load the rule with this case's vars: {exc}")
        context = AnalysisContext(cwd=case.cwd)
        session = SessionState()
        if case.instruction:
            session.observe_user(case.instruction)
        for index, entry in enumerate(case.history):
            earlier = ToolCall(f"history-{index}", entry.tool, entry.arguments)
            checker.check_call(earlier, harness=case.harness, context=context, session=session)
            session.observe_output(entry.output)
        calls: list[ToolCall] = []
        if case.arguments_json is not None:
            raw = {"id": "fixture", "name": case.tool, "arguments": case.arguments_json}
            calls.append(ToolCall.from_openai(raw))
        elif case.tool:
            calls.append(ToolCall("fixture", case.tool, case.arguments))
        verdicts, spoken = checker.check_turn(
            calls, text=case.text, harness=case.harness, context=context, session=session
        )
        findings = [*(f for verdict in verdicts for f in verdict.findings), *spoken]
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


def _is_text_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
