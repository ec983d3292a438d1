"""Analysers of languages embedded in other languages, by name, and the re-parse level.

Shell runs Python (``python -c``, heredocs) and Python runs shell (``subprocess``, ``os.system``):
each asks this registry for the other instead of importing it, and ``safeagents.analysis``
registers both. The re-parse level (how many strings deep the current analysis is) travels in a
context variable so that the shell analyser's budget counts across languages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from safeagents._actions import AnalysisContext, Effect

__all__ = ["Analyser", "active_level", "analyse", "at_level", "register"]

Analyser = Callable[[str, AnalysisContext], list[Effect]]

_ANALYSERS: dict[str, Analyser] = {}
_LEVEL: ContextVar[int] = ContextVar("safeagents_analysis_level", default=0)


def register(language: str, analyser: Analyser) -> None:
    """Make ``analyser`` the one asked for text in ``language``."""
    _ANALYSERS[language] = analyser


def active_level() -> int:
    """How deeply the current analysis is nested in re-analysis of embedded text."""
    return _LEVEL.get()


@contextmanager
def at_level(level: int) -> Iterator[None]:
    """Run the body with the re-parse level set to ``level``."""
    token = _LEVEL.set(level)
    try:
        yield
    finally:
        _LEVEL.reset(token)


def analyse(language: str, text: str, ctx: AnalysisContext, level: int) -> list[Effect] | None:
    """Effects of ``text`` analysed at re-parse ``level``; ``None`` if no analyser is registered.

    Errors of the analyser propagate: the caller decides what a failure means.
    """
    analyser = _ANALYSERS.get(language)
    if analyser is None:
        return None
    with at_level(level):
        return list(analyser(text, ctx))
