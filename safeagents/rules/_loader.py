"""Loading rule packs into a :class:`RuleSet`, collecting every error with its position."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from safeagents.rules._compile import PatternBank
from safeagents.rules._conditions import ConditionParser, MacroTable
from safeagents.rules._discover import RuleSource, bundled_rules_path, discover
from safeagents.rules._errors import ErrorSink, RuleError, did_you_mean
from safeagents.rules._model import Pack, Rule, RuleException
from safeagents.rules._schema import PackModel, RuleModel, validate
from safeagents.rules._tree import detector_calls
from safeagents.rules._values import NAME_PATTERN, Namespace, build_namespace
from safeagents.rules._yaml import Document, load_document

__all__ = ["EXCLUDE_SOURCE", "VAR_SOURCE", "RuleSet", "normalise_vars", "parse_vars"]

VAR_SOURCE = "--var"
"""The ``file`` of errors in ``--var`` overrides (they have no position)."""
EXCLUDE_SOURCE = "--exclude-rule"
"""The ``file`` of errors in the ids given to exclude."""

VarValues = Mapping[str, str | Sequence[str]]


def parse_vars(pairs: Iterable[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings (``--var``) as a mapping; a pair without ``=`` is a
    :class:`ValueError`."""
    parsed: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"expects KEY=VALUE, got {pair!r}")
        parsed[key.strip()] = value
    return parsed


def normalise_vars(values: VarValues | None) -> dict[str, tuple[str, ...]]:
    """``--var`` values: a string is split on commas; blanks are dropped."""
    result: dict[str, tuple[str, ...]] = {}
    for name, value in (values or {}).items():
        items = value.split(",") if isinstance(value, str) else [str(item) for item in value]
        result[name] = tuple(item.strip() for item in items if item.strip())
    return result


class RuleSet:
    """Rules loaded from packs, compiled once; an :class:`Engine` matches effects against them."""

    def __init__(self, rules: Sequence[Rule], packs: Sequence[Pack], bank: PatternBank) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.packs: tuple[Pack, ...] = tuple(packs)
        self._bank = bank
        self._by_id = {rule.id: rule for rule in self.rules}

    @classmethod
    def load(
        cls,
        paths: Sequence[str | Path] | None = None,
        *,
        vars: VarValues | None = None,
        detectors: Collection[str] | None = None,
        exclude: Collection[str] = (),
    ) -> RuleSet:
        """Load packs, pack directories or rule files (``None``: the bundled packs).

        ``exclude`` drops the rules of those ids (:meth:`without`). With ``detectors``, the
        detector names the remaining rules call must be among them (:meth:`check_detectors`)."""
        if isinstance(paths, (str, Path)):
            paths = [paths]
        targets = [Path(p) for p in paths] if paths is not None else [bundled_rules_path()]
        rules = _Loader(normalise_vars(vars)).load(targets)
        if exclude:
            rules = rules.without(exclude)
        if detectors is not None:
            rules.check_detectors(detectors)
        return rules

    def check_detectors(self, known: Collection[str]) -> None:
        """:class:`RuleLoadError` naming, at its position, each detector call not in ``known``."""
        sink = ErrorSink()
        names = sorted(known)
        for rule in self.rules:
            for condition in (rule.condition, *(e.condition for e in rule.exceptions)):
                for call in detector_calls(condition):
                    if call.name in known:
                        continue
                    listing = f" (known: {', '.join(names)})" if names else " (none registered)"
                    hint = did_you_mean(call.name, names) or listing
                    message = f"unknown detector '{call.name}'{hint}"
                    sink.add(RuleError(call.file, call.line, call.col, message))
        sink.raise_if_any()

    @property
    def pattern_bank(self) -> PatternBank:
        return self._bank

    def get(self, rule_id: str) -> Rule:
        """The rule called ``rule_id``; ``KeyError`` names close matches."""
        try:
            return self._by_id[rule_id]
        except KeyError:
            raise KeyError(f"no rule '{rule_id}'{did_you_mean(rule_id, self._by_id)}") from None

    def select(self, rule_ids: Iterable[str], *, enable: bool = False) -> RuleSet:
        """A rule set of just ``rule_ids`` (``enable`` turns disabled ones on)."""
        chosen = [self.get(rule_id) for rule_id in rule_ids]
        if enable:
            chosen = [replace(rule, enabled=True) for rule in chosen]
        return RuleSet(chosen, self.packs, self._bank)

    def without(self, rule_ids: Collection[str]) -> RuleSet:
        """This set less the rules ``rule_ids`` names (``--exclude-rule``); an id no rule has
        is a :class:`RuleLoadError`, so a typo never leaves a rule on unnoticed."""
        sink = ErrorSink()
        for rule_id in rule_ids:
            if rule_id not in self._by_id:
                message = f"unknown rule '{rule_id}'{did_you_mean(rule_id, self._by_id)}"
                sink.add(RuleError(EXCLUDE_SOURCE, 0, 0, message))
        sink.raise_if_any()
        kept = [rule for rule in self.rules if rule.id not in rule_ids]
        return RuleSet(kept, self.packs, self._bank)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __repr__(self) -> str:
        return f"<RuleSet {len(self.rules)} rules, {len(self.packs)} packs>"


@dataclass(slots=True)
class _LoadedPack:
    pack: Pack
    namespace: Namespace
    macros: MacroTable
    usable: bool
    document: Document | None


class _Loader:
    def __init__(self, overrides: dict[str, tuple[str, ...]]) -> None:
        self.overrides = overrides
        self.bank = PatternBank()
        self.sink = ErrorSink()
        self.declared_vars: set[str] = set()
        self.declared_lists: set[str] = set()
        self.id_positions: dict[str, tuple[int, int]] = {}

    def load(self, targets: Sequence[Path]) -> RuleSet:
        sources, errors = discover(targets)
        self.sink.extend(errors)
        packs: list[Pack] = []
        rules: list[Rule] = []
        pack_files: dict[str, str] = {}
        for source in sources:
            loaded = self._pack(source)
            if loaded.document is not None:
                earlier = pack_files.setdefault(loaded.pack.name, loaded.document.file)
                if earlier != loaded.document.file:
                    message = f"duplicate pack name '{loaded.pack.name}' (also in {earlier})"
                    self.sink.add(loaded.document.error(("name",), message))
            packs.append(loaded.pack)
            rules.extend(self._rules(source, loaded))
        self._check_overrides()
        self._check_duplicate_ids(rules)
        self.sink.raise_if_any()
        self.bank.compile()
        return RuleSet(rules, packs, self.bank)

    def _pack(self, source: RuleSource) -> _LoadedPack:
        directory = source.directory
        implicit = Pack(name=directory.resolve().name, description="", path=directory)
        if source.pack_file is None:
            return _LoadedPack(implicit, Namespace(), MacroTable(), True, None)
        document = self._document(source.pack_file)
        model, errors = validate(PackModel, document) if document else (None, [])
        self.sink.extend(errors)
        if document is None or model is None:
            return _LoadedPack(implicit, Namespace(), MacroTable(), False, document)
        self.declared_vars.update(model.vars)
        self.declared_lists.update(model.lists)
        overrides = {k: v for k, v in self.overrides.items() if k in model.vars}
        namespace, errors = build_namespace(document, model.vars, model.lists, overrides)
        self.sink.extend(errors)
        for name in model.macros:
            if not NAME_PATTERN.match(name):
                message = f"invalid macro name '{name}': use letters, digits and _"
                self.sink.add(document.error(("macros", name), message, key=True))
        macros = MacroTable(document, model.macros)
        parser = ConditionParser(self.bank, namespace, macros)
        for name in model.macros:
            macros.resolve(name, parser, document, ("macros", name))
        self.sink.extend(parser.errors)
        pack = Pack(
            name=model.name,
            description=model.description,
            path=directory,
            vars=namespace.vars,
            lists=namespace.lists,
            macros=tuple(model.macros),
        )
        return _LoadedPack(pack, namespace, macros, True, document)

    def _rules(self, source: RuleSource, loaded: _LoadedPack) -> Iterator[Rule]:
        for file in source.rule_files:
            document = self._document(file)
            if document is None:
                continue
            model, errors = validate(RuleModel, document)
            self.sink.extend(errors)
            raw = document.data if isinstance(document.data, dict) else {}
            rule_id = raw.get("id")
            self.id_positions[str(file)] = document.position(("id",))
            if isinstance(rule_id, str) and rule_id != file.name.removesuffix(".yaml"):
                message = f"rule id '{rule_id}' must match its file name '{file.name}'"
                self.sink.add(document.error(("id",), message))
            if not loaded.usable:
                continue
            parser = ConditionParser(self.bank, loaded.namespace, loaded.macros)
            if model is None:  # the conditions' own errors are reported all the same
                self._parse_raw_conditions(parser, document, raw)
                continue
            condition = parser.parse(document, model.match, ("match",))
            exceptions: list[RuleException] = []
            names: set[str] = set()
            for index, entry in enumerate(model.exceptions):
                if entry.name in names:
                    message = f"duplicate exception name '{entry.name}'"
                    self.sink.add(document.error(("exceptions", index, "name"), message))
                names.add(entry.name)
                at = ("exceptions", index, "match")
                exceptions.append(
                    RuleException(entry.name, parser.parse(document, entry.match, at))
                )
            self.sink.extend(parser.errors)
            if parser.errors:
                continue
            yield Rule(
                id=model.id,
                category=model.category,
                severity=model.severity,
                action=model.action,
                description=model.description,
                message=model.message,
                enabled=model.enabled,
                source=file,
                pack=loaded.pack.name,
                condition=condition,
                exceptions=tuple(exceptions),
            )

    def _parse_raw_conditions(
        self, parser: ConditionParser, document: Document, raw: Mapping[str, Any]
    ) -> None:
        if "match" in raw:
            parser.parse(document, raw["match"], ("match",))
        entries = raw.get("exceptions")
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, dict) and "match" in entry:
                parser.parse(document, entry["match"], ("exceptions", index, "match"))
        self.sink.extend(parser.errors)

    def _document(self, file: Path) -> Document | None:
        try:
            document, errors = load_document(file)
        except RuleError as error:
            self.sink.add(error)
            return None
        self.sink.extend(errors)
        return document

    def _check_overrides(self) -> None:
        for name in self.overrides:
            if name in self.declared_vars:
                continue
            if name in self.declared_lists:
                message = f"'{name}' is a list, not a var: lists cannot be overridden"
            else:
                known = sorted(self.declared_vars)
                listing = f"known vars: {', '.join(known)}" if known else "no pack declares vars"
                message = f"unknown var '{name}'{did_you_mean(name, known)} ({listing})"
            self.sink.add(RuleError(VAR_SOURCE, 0, 0, message))

    def _check_duplicate_ids(self, rules: list[Rule]) -> None:
        first: dict[str, Rule] = {}
        for rule in rules:
            if rule.id in first:
                message = f"duplicate rule id '{rule.id}' (also in {first[rule.id].source})"
                line, col = self.id_positions[str(rule.source)]
                self.sink.add(RuleError(str(rule.source), line, col, message))
            first.setdefault(rule.id, rule)
