"""Shell scripts (a tool call's command) to canonical effects, via tree-sitter-bash.

Hostile input is bounded (constants in ``_model`` and ``_chunks``): tree-sitter never gets more
than ``PARSE_LIMIT`` bytes of code at once (its error recovery is quadratic) nor more than
``MAX_PARSED_BYTES`` in all; the walk visits at most ``MAX_NODES`` nodes and words, goes at
most ``MAX_NESTING`` levels deep, re-parses strings (``bash -c``, ``eval``) at most
``MAX_LEVEL`` times, substitutes at most ``MAX_EXPANDED_CHARS`` characters of variables and
emits at most ``MAX_EFFECTS`` effects. Past a bound the effects found so far are kept and an
opaque ``exec`` of the script is added, marked ``unanalysable="budget"`` (which the bundled
``unanalysable-call`` rule rejects).

Results of scripts up to ``CACHEABLE_LENGTH`` characters are kept in a small LRU
(``_cache.RESULTS``) keyed by script, context and re-parse level.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis._embedded import active_level
from safeagents.analysis._shell._cache import CACHEABLE_LENGTH, RESULTS
from safeagents.analysis._shell._model import (
    MAX_LEVEL,
    BudgetExhausted,
    Run,
    ShellState,
    gave_up,
)

if TYPE_CHECKING:
    from safeagents.analysis._shell._walker import Walker

__all__ = ["analyze_shell"]


def analyze_shell(script: str, ctx: AnalysisContext, *, _depth: int = 0) -> list[Effect]:
    """Effects of running ``script`` in ``ctx``; never raises."""
    try:
        if not isinstance(script, str):
            return [gave_up(repr(script), "error")]
        level = max(_depth, active_level())
        if level > MAX_LEVEL:
            return [gave_up(script)]
        if len(script) > CACHEABLE_LENGTH:
            return analyse_uncached(script, ctx, level)
        key = (script, ctx, level)
        effects = RESULTS.get(key)
        if effects is None:
            effects = analyse_uncached(script, ctx, level)
            RESULTS.put(key, effects)
        return effects
    except Exception:
        return [gave_up(script if isinstance(script, str) else "", "error")]


def analyse_uncached(script: str, ctx: AnalysisContext, level: int) -> list[Effect]:
    """The analysis itself, at re-parse ``level``; raises only on an internal error."""
    run = Run()
    try:
        _walker_class()(script, run, level).analyse(ShellState(ctx), 0)
    except (BudgetExhausted, RecursionError):
        run.effects.append(gave_up(script))
    return run.effects


@cache
def _walker_class() -> type[Walker]:
    """The walker, imported on first use: ``import safeagents`` stays free of tree-sitter."""
    from safeagents.analysis._shell._walker import Walker

    return Walker
