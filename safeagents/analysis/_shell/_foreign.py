"""Calls into the Python and patch analysers, which may call back into the shell analyser."""

from __future__ import annotations

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis._embedded import analyse, at_level
from safeagents.analysis._patch import parse_patch


def python_effects(code: str, ctx: AnalysisContext, level: int) -> list[Effect] | None:
    """Effects of a Python snippet, or ``None`` when it could not be analysed."""
    try:
        return analyse("python", code, ctx, level + 1)
    except Exception:
        return None


def patch_effects(text: str, ctx: AnalysisContext, level: int) -> list[Effect] | None:
    """Effects of an apply_patch envelope or unified diff, or ``None`` on failure."""
    try:
        with at_level(level + 1):
            return list(parse_patch(text, ctx))
    except Exception:
        return None
