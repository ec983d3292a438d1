"""Shell scripts (a tool call's command) to canonical effects, via tree-sitter-bash.

Hostile input is bounded (constants in ``_model`` and ``_chunks``): tree-sitter never gets more
than ``PARSE_LIMIT`` bytes of code at once (its error recovery is quadratic) nor more than
``MAX_PARSED_BYTES`` in all; the walk visits at most ``MAX_NODES`` nodes and words, goes at
most ``MAX_NESTING`` levels deep, re-parses strings (``bash -c``, ``eval``) at most
``MAX_LEVEL`` times and emits at most ``MAX_EFFECTS`` effects. Past a bound the effects found
so far are kept and an opaque ``exec`` of the script is added.
"""

from __future__ import annotations

from safeagents._actions import AnalysisContext, Effect
from safeagents._shell._foreign import active_level
from safeagents._shell._model import MAX_LEVEL, BudgetExhausted, Run, ShellState, opaque_exec

__all__ = ["analyze_shell"]


def analyze_shell(script: str, ctx: AnalysisContext, *, _depth: int = 0) -> list[Effect]:
    """Effects of running ``script`` in ``ctx``; never raises."""
    try:
        if not isinstance(script, str):
            return [opaque_exec(repr(script))]
        level = max(_depth, active_level())
        if level > MAX_LEVEL:
            return [opaque_exec(script)]
        from safeagents._shell._walker import Walker

        run = Run()
        try:
            Walker(script, run, level).analyse(ShellState(ctx), 0)
        except BudgetExhausted:
            run.effects.append(opaque_exec(script))
        except RecursionError:
            run.effects.append(opaque_exec(script))
        return run.effects
    except Exception:
        return [opaque_exec(script if isinstance(script, str) else "")]
