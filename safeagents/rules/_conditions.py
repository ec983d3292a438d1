"""Parse YAML conditions into the compiled tree, expanding ``$names`` and macros."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from safeagents._actions import EFFECT_KINDS
from safeagents.rules._compile import (
    GlobError,
    PatternBank,
    contains_to_regex,
    glob_to_regex,
    regex_problem,
)
from safeagents.rules._errors import RuleError, did_you_mean
from safeagents.rules._schema import show
from safeagents.rules._tree import (
    NEVER,
    AllOf,
    AnyOf,
    Condition,
    DetectorCall,
    EqualsTest,
    FieldTest,
    NoneOf,
    PatternTest,
    SaidEarlier,
    SessionFact,
    TurnTest,
    Value,
)
from safeagents.rules._values import Namespace, UnknownReferenceError
from safeagents.rules._yaml import Document, NodePath

__all__ = [
    "BOOL_FIELDS",
    "FIELDS",
    "MATCHERS",
    "SESSION_FACTS",
    "TEXT_FIELDS",
    "ConditionParser",
    "MacroTable",
]

TEXT_FIELDS = (
    "path",
    "dest",
    "content",
    "added",
    "removed",
    "argv0",
    "argv",
    "command",
    "url",
    "host",
    "pattern",
    "tool",
    "harness",
    "unanalysable",
    "text",
    "instruction",
)
BOOL_FIELDS = ("new_file", "opaque", "own_repo")
FIELDS = ("effect", *TEXT_FIELDS, *BOOL_FIELDS)
MATCHERS = ("equals", "in", "glob", "regex", "contains")
_COMBINATORS = ("all", "any", "not", "turn", "said_earlier", "macro", "detector", "session")
SESSION_FACTS = (
    "agent-created",
    "creates-file",
    "pre-existing",
    "seen-existing",
    "task-test",
    "named-in-instruction",
    "in-working-directory",
)
"""What ``session:`` can ask of an effect's path (docs/rule-dsl.md, "The session")."""


class MacroTable:
    """A pack's named conditions, compiled on first use, with cycle detection."""

    def __init__(self, document: Document | None = None, bodies: Mapping[str, Any] | None = None):
        self.document = document
        self.bodies: Mapping[str, Any] = bodies or {}
        self._compiled: dict[str, Condition] = {}
        self._active: list[str] = []

    def resolve(
        self, name: str, parser: ConditionParser, document: Document, path: NodePath
    ) -> Condition:
        if name in self._compiled:
            return self._compiled[name]
        if name in self._active:
            cycle = " -> ".join([*self._active[self._active.index(name) :], name])
            parser.errors.append(document.error(path, f"macro cycle: {cycle}"))
            return NEVER
        assert self.document is not None, "macros exist only in a pack.yaml"
        self._active.append(name)
        try:
            condition = parser.parse(self.document, self.bodies[name], ("macros", name))
        finally:
            self._active.pop()
        self._compiled[name] = condition
        return condition


class ConditionParser:
    """Turns the YAML of a ``match`` into a :class:`Condition`, appending errors."""

    def __init__(self, bank: PatternBank, namespace: Namespace, macros: MacroTable) -> None:
        self.bank = bank
        self.namespace = namespace
        self.macros = macros
        self.errors: list[RuleError] = []

    def parse(self, document: Document, data: Any, path: NodePath) -> Condition:
        if not isinstance(data, dict):
            self._error(document, path, f"expected a condition (a mapping), got {show(data)}")
            return NEVER
        if not data:
            self._error(document, path, "empty condition: give at least one key")
            return NEVER
        parts = [self._part(document, key, value, (*path, key)) for key, value in data.items()]
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def _part(self, document: Document, key: str, value: Any, path: NodePath) -> Condition:
        if key == "all":
            return AllOf(self._children(document, key, value, path))
        if key == "any":
            return AnyOf(self._children(document, key, value, path))
        if key == "not":
            if isinstance(value, list):
                return NoneOf(self._children(document, key, value, path))
            return NoneOf((self.parse(document, value, path),))
        if key == "turn":
            return TurnTest(self.parse(document, value, path))
        if key == "said_earlier":
            line, col = document.position(path)
            return SaidEarlier(f"{document.file}:{line}:{col}", self.parse(document, value, path))
        if key == "macro":
            if not isinstance(value, str):
                self._error(document, path, f"macro: expected a macro name, got {show(value)}")
            elif value not in self.macros.bodies:
                known = tuple(self.macros.bodies)
                hint = did_you_mean(value, known) or (
                    f" (known: {', '.join(known)})" if known else " (the pack defines no macros)"
                )
                self._error(document, path, f"unknown macro '{value}'{hint}")
            else:
                return self.macros.resolve(value, self, document, path)
            return NEVER
        if key == "detector":
            if not isinstance(value, str) or not value:
                self._error(
                    document, path, f"detector: expected a detector name, got {show(value)}"
                )
                return NEVER
            line, col = document.position(path)
            return DetectorCall(value, document.file, line, col)
        if key == "session":
            return self._session(document, value, path)
        if key in FIELDS:
            return self._field(document, key, value, path)
        hint = did_you_mean(key, (*_COMBINATORS, *FIELDS)) or (
            f" (expected one of {', '.join((*_COMBINATORS, *FIELDS))})"
        )
        self.errors.append(document.error(path, f"unknown field '{key}'{hint}", key=True))
        return NEVER

    def _session(self, document: Document, value: Any, path: NodePath) -> Condition:
        items = value if isinstance(value, list) else [value]
        names: list[str] = []
        for index, item in enumerate(items):
            at = (*path, index) if isinstance(value, list) else path
            if isinstance(item, str) and item in SESSION_FACTS:
                names.append(item)
                continue
            hint = (did_you_mean(item, SESSION_FACTS) if isinstance(item, str) else "") or (
                f" (expected one of {', '.join(SESSION_FACTS)})"
            )
            self._error(document, at, f"session: unknown fact {show(item)}{hint}")
        if not items:
            self._error(document, path, "session: expected a fact or a list of facts")
        return SessionFact(tuple(names)) if names else NEVER

    def _children(
        self, document: Document, key: str, value: Any, path: NodePath
    ) -> tuple[Condition, ...]:
        if not isinstance(value, list):
            self._error(document, path, f"{key}: expected a list of conditions, got {show(value)}")
            return ()
        return tuple(self.parse(document, item, (*path, i)) for i, item in enumerate(value))

    def _field(self, document: Document, field: str, value: Any, path: NodePath) -> Condition:
        if not isinstance(value, dict):
            many = isinstance(value, list)
            return FieldTest(field, (self._equals(document, field, value, path, many=many),))
        if not value:
            self._error(document, path, f"{field}: empty matcher")
            return NEVER
        tests: list[EqualsTest | PatternTest] = []
        for matcher, argument in value.items():
            at = (*path, matcher)
            if matcher in ("equals", "in"):
                tests.append(self._equals(document, field, argument, at, many=matcher == "in"))
            elif matcher in MATCHERS:
                tests.append(self._patterns(document, field, matcher, argument, at))
            else:
                message = f"unknown matcher '{matcher}' (expected one of {', '.join(MATCHERS)})"
                self.errors.append(document.error(at, message, key=True))
        return FieldTest(field, tuple(tests))

    def _equals(
        self, document: Document, field: str, raw: Any, path: NodePath, *, many: bool
    ) -> EqualsTest:
        items = raw if isinstance(raw, list) else [raw]
        if isinstance(raw, list) and not many:
            self._error(document, path, f"{field}: equals takes one value; use in for a list")
        reference = isinstance(raw, str) and raw.startswith("$") and not raw.startswith("$$")
        if many and not isinstance(raw, list) and not reference:
            self._error(document, path, f"{field}: in expects a list, got {show(raw)}")
        values: list[Value] = []
        for index, item in enumerate(items):
            at = (*path, index) if isinstance(raw, list) else path
            values.extend(self._scalar(document, field, item, at))
        return EqualsTest(frozenset(values))

    def _scalar(self, document: Document, field: str, item: Any, path: NodePath) -> list[Value]:
        if field in BOOL_FIELDS:
            if isinstance(item, bool):
                return [item]
            self._error(document, path, f"{field}: expected true or false, got {show(item)}")
            return []
        if not isinstance(item, str):
            self._error(document, path, f"{field}: expected text, got {show(item)}")
            return []
        expanded = self._expand(document, item, path)
        if field == "effect":
            for kind in expanded:
                if kind not in EFFECT_KINDS:
                    kinds = ", ".join(EFFECT_KINDS)
                    self._error(document, path, f"effect: expected one of {kinds}, got {kind!r}")
        return list(expanded)

    def _patterns(
        self, document: Document, field: str, matcher: str, raw: Any, path: NodePath
    ) -> PatternTest:
        if field not in TEXT_FIELDS:
            message = f"{field}: matcher '{matcher}' needs a text field; use equals or in"
            self.errors.append(document.error(path, message, key=True))
            return PatternTest(frozenset())
        items = raw if isinstance(raw, list) else [raw]
        indices: set[int] = set()
        for index, item in enumerate(items):
            at = (*path, index) if isinstance(raw, list) else path
            if not isinstance(item, str):
                self._error(document, at, f"{matcher}: expected text, got {show(item)}")
                continue
            for text in self._expand(document, item, at):
                regex = self._to_regex(document, matcher, text, at)
                if regex is not None:
                    indices.add(self.bank.add(field, regex))
        return PatternTest(frozenset(indices))

    def _to_regex(self, document: Document, matcher: str, text: str, path: NodePath) -> str | None:
        if matcher == "contains":
            return contains_to_regex(text)
        if matcher == "glob":
            try:
                return glob_to_regex(text)
            except GlobError as exc:
                self._error(document, path, str(exc))
                return None
        problem = regex_problem(text)
        if problem is not None:
            self._error(document, path, f"invalid RE2 regex '{text}': {problem}")
            return None
        return text

    def _expand(self, document: Document, text: str, path: NodePath) -> tuple[str, ...]:
        try:
            return self.namespace.expand(text)
        except UnknownReferenceError as exc:
            self._error(document, path, str(exc))
            return ()

    def _error(self, document: Document, path: NodePath, message: str) -> None:
        self.errors.append(document.error(path, message))
