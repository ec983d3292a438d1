"""Calls into the Python and patch analysers, which may call back into the shell analyser."""

from __future__ import annotations

from contextvars import ContextVar

from safeagents._actions import AnalysisContext, Effect

_LEVEL: ContextVar[int] = ContextVar("safeagents_shell_level", default=0)


def active_level() -> int:
    """How deeply the current analysis is nested in shell/Python/patch re-analysis."""
    return _LEVEL.get()


def python_effects(code: str, ctx: AnalysisContext, level: int) -> list[Effect] | None:
    """Effects of a Python snippet, or ``None`` when it could not be analysed."""
    token = _LEVEL.set(level + 1)
    try:
        from safeagents._python_code import analyze_python

        return list(analyze_python(code, ctx))
    except Exception:
        return None
    finally:
        _LEVEL.reset(token)


def patch_effects(text: str, ctx: AnalysisContext, level: int) -> list[Effect] | None:
    """Effects of an apply_patch envelope or unified diff, or ``None`` on failure."""
    token = _LEVEL.set(level + 1)
    try:
        from safeagents._patch import parse_patch

        return list(parse_patch(text, ctx))
    except Exception:
        return None
    finally:
        _LEVEL.reset(token)
