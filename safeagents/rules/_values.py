"""Pack vars and lists, and ``$name`` references to them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from safeagents.rules._errors import RuleError, did_you_mean
from safeagents.rules._schema import show
from safeagents.rules._yaml import Document, NodePath

__all__ = ["NAME_PATTERN", "Namespace", "UnknownReferenceError", "build_namespace"]

NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_REFERENCE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


class UnknownReferenceError(Exception):
    """A ``$name`` that is neither a var nor a list of the pack."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        super().__init__(f"unknown list or var '${name}'{did_you_mean(name, known)}")
        self.name = name


@dataclass(frozen=True, slots=True)
class Namespace:
    """Resolved values of a pack's vars and lists (one namespace)."""

    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    vars: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    lists: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def expand(self, text: str) -> tuple[str, ...]:
        """``$name`` -> its values; ``$name/rest`` -> each value + ``/rest``; ``$$x`` -> ``$x``."""
        return _expand(text, self.values)


def _expand(text: str, values: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    if text.startswith("$$"):
        return (text[1:],)
    reference = _REFERENCE.match(text)
    if reference is None:
        return (text,)
    name = reference.group(1)
    if name not in values:
        raise UnknownReferenceError(name, tuple(values))
    suffix = text[reference.end() :]
    return tuple(value + suffix for value in values[name])


def build_namespace(
    document: Document,
    raw_vars: Mapping[str, Any],
    raw_lists: Mapping[str, Any],
    overrides: Mapping[str, tuple[str, ...]],
) -> tuple[Namespace, list[RuleError]]:
    """Check and resolve a pack's vars (with run-time ``overrides``) and lists."""
    errors: list[RuleError] = []
    raw: dict[str, tuple[tuple[str, NodePath | None], ...]] = {}
    for section, entries in (("vars", raw_vars), ("lists", raw_lists)):
        for name, value in entries.items():
            path: NodePath = (section, name)
            if not NAME_PATTERN.match(name):
                message = f"invalid name '{name}': use letters, digits and _"
                errors.append(document.error(path, message, key=True))
                continue
            if name in raw:
                message = f"'{name}' is both a var and a list (they share one namespace)"
                errors.append(document.error(path, message, key=True))
                continue
            items = _items(document, section, name, value, errors)
            if name in overrides and section == "vars":
                items = tuple((item, None) for item in overrides[name])
            raw[name] = items
    resolved: dict[str, tuple[str, ...]] = {}
    for name in raw:
        _resolve(name, raw, resolved, [], document, errors)
    namespace = Namespace(
        values=resolved,
        vars={name: resolved[name] for name in raw_vars if name in resolved},
        lists={name: resolved[name] for name in raw_lists if name in resolved},
    )
    return namespace, errors


def _items(
    document: Document, section: str, name: str, value: Any, errors: list[RuleError]
) -> tuple[tuple[str, NodePath | None], ...]:
    path: NodePath = (section, name)
    if section == "vars" and isinstance(value, str):
        return ((value, path),)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple((item, (*path, index)) for index, item in enumerate(value))
    expected = "text or a list of text" if section == "vars" else "a list of text"
    errors.append(document.error(path, f"{section}.{name}: expected {expected}, got {show(value)}"))
    return ()


def _resolve(
    name: str,
    raw: Mapping[str, tuple[tuple[str, NodePath | None], ...]],
    resolved: dict[str, tuple[str, ...]],
    stack: list[str],
    document: Document,
    errors: list[RuleError],
) -> tuple[str, ...]:
    if name in resolved:
        return resolved[name]
    stack.append(name)
    values: list[str] = []
    for item, path in raw[name]:
        if path is None:  # run-time overrides are taken literally
            values.append(item)
            continue
        reference = _REFERENCE.match(item)
        target = reference.group(1) if reference and not item.startswith("$$") else None
        if target in stack:
            cycle = " -> ".join([*stack[stack.index(target) :], target])
            errors.append(document.error(path, f"reference cycle: {cycle}"))
            continue
        if target is not None and target in raw:
            _resolve(target, raw, resolved, stack, document, errors)
        try:
            values.extend(_expand(item, resolved))
        except UnknownReferenceError as exc:
            errors.append(document.error(path, str(exc)))
    stack.pop()
    resolved[name] = tuple(values)
    return resolved[name]
