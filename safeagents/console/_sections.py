"""Add-on sections of the console (``safeagents_console_sections``), collected and checked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from safeagents._registry import PluginError, Registry
from safeagents.plugins import ConsoleSection

__all__ = ["RESERVED", "plugin_sections"]

RESERVED = frozenset({"", "events", "sessions", "rules", "explain", "aliases", "static"})
"""First path segments the console's own pages use."""


def plugin_sections(registry: Registry, runs: Sequence[Path]) -> tuple[ConsoleSection, ...]:
    """Every plugin's sections for ``runs``; :class:`PluginError` for a malformed one or two
    sections claiming one path."""
    hook = registry.plugin_manager.hook.safeagents_console_sections
    sections: list[ConsoleSection] = []
    for provided in hook(runs=list(runs)):
        for section in provided or ():
            if not isinstance(section, ConsoleSection):
                raise PluginError(f"a console section must be a ConsoleSection, not {section!r}")
            path = section.path.strip("/")
            if "/" in path or path in RESERVED:
                raise PluginError(
                    f"console section {section.title!r}: path {section.path!r} is "
                    "not one free path segment"
                )
            if any(path == other.path.strip("/") for other in sections):
                raise PluginError(f"two console sections claim the path {path!r}")
            sections.append(section)
    return tuple(sections)
