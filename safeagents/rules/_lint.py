"""What ``safeagents lint`` says beyond load errors: tests of fields an effect never carries,
and the effects reference of ``docs/rule-dsl.md``, both from :data:`EFFECT_FIELDS`."""

from __future__ import annotations

from collections.abc import Iterator

from safeagents._actions import EFFECT_FIELDS, EFFECT_KINDS, FIELD_DOCS
from safeagents.rules._errors import RuleError
from safeagents.rules._loader import RuleSet
from safeagents.rules._tree import AllOf, AnyOf, Condition, FieldTest, pinned_kinds
from safeagents.rules._yaml import NodePath, load_document

__all__ = ["effects_reference", "field_warnings"]

_CARRIERS: dict[str, frozenset[str]] = {
    field: frozenset(kind for kind, fields in EFFECT_FIELDS.items() if field in fields)
    for field in FIELD_DOCS
}


def field_warnings(rules: RuleSet) -> list[RuleError]:
    """A warning for each field a rule tests where its ``effect`` pins kinds none of which
    carries that field (``effect: network`` with ``argv0``): such a test never holds."""
    warnings: list[RuleError] = []
    for rule in rules.rules:
        stray = set(_stray_fields(rule.condition, None))
        kinds = pinned_kinds(rule.condition)
        for exception in rule.exceptions:
            stray.update(_stray_fields(exception.condition, kinds))
        if not stray:
            continue
        document, _ = load_document(rule.source)
        for field, pinned in sorted(stray):
            at = _key_position(document.keys, field) or ("match",)
            carriers = ", ".join(sorted(_CARRIERS[field]))
            message = (
                f"warning: '{field}' is never set on {' or '.join(sorted(pinned))} effects "
                f"(only on {carriers}), so this test never holds"
            )
            warnings.append(document.error(at, message, key=True))
    return warnings


def _stray_fields(
    condition: Condition, kinds: frozenset[str] | None
) -> Iterator[tuple[str, frozenset[str]]]:
    if isinstance(condition, AllOf):
        pinned = pinned_kinds(condition)
        inner = pinned if kinds is None else (kinds if pinned is None else kinds & pinned)
        for child in condition.children:
            yield from _stray_fields(child, inner)
    elif isinstance(condition, AnyOf):
        for child in condition.children:
            yield from _stray_fields(child, kinds)
    elif (
        isinstance(condition, FieldTest)
        and condition.field in _CARRIERS
        and kinds is not None
        and kinds.isdisjoint(_CARRIERS[condition.field])
    ):
        yield condition.field, kinds


def _key_position(keys: dict[NodePath, tuple[int, int]], field: str) -> NodePath | None:
    for path in keys:
        if path and path[-1] == field and path[0] in ("match", "exceptions"):
            return path
    return None


def effects_reference() -> str:
    """The Markdown reference of effect kinds and their fields, as docs/rule-dsl.md has it."""
    lines = ["| effect | its fields |", "| --- | --- |"]
    for kind in EFFECT_KINDS:
        fields = ", ".join(f"`{field}`" for field in EFFECT_FIELDS[kind])
        lines.append(f"| `{kind}` | {fields} |")
    lines += ["", "| field | holds |", "| --- | --- |"]
    lines += [f"| `{field}` | {text} |" for field, text in FIELD_DOCS.items()]
    return "\n".join(lines) + "\n"
