"""The calls an issue shows as its own examples: ``>>> format_duration(3599.6)``, ``` `parse(
"2021-W53-1")` returns None ```, ``round_half(2.675)  # gives 2.67``.

A bug report's examples are inputs it shows failing, as a failing test's id or traceback is
(:mod:`._failing_inputs`): every call of the instruction whose arguments are all literals
(``f(3599.6)``, ``mod.f("a b", 12)``) gives its arguments' distinctive numbers (three or more
significant digits) and its own text (which quotes its string arguments).
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

from safeagents.detectors._identity_cache import IdentityCache
from safeagents.detectors._safe_eval import Evaluator, Unknown

__all__ = ["Reported", "reported_calls"]

_CALL = re.compile(r"(?<![\w.])[A-Za-z_][\w.]*\([^()\n]{1,200}\)")
_MAX_CALLS = 200
_STEPS = 2_000
_CACHE_SIZE = 256


class Reported(NamedTuple):
    """The arguments of the instruction's literal calls: their numbers, and the calls' texts."""

    numbers: tuple[int | float, ...]
    texts: frozenset[str]


def _read(instruction: str) -> Reported:
    numbers: list[int | float] = []
    texts: set[str] = set()
    for count, match in enumerate(_CALL.finditer(instruction) if "(" in instruction else ()):
        if count >= _MAX_CALLS:
            break
        try:
            call = ast.parse(match.group(0), mode="eval").body
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        if not isinstance(call, ast.Call) or not call.args:
            continue
        evaluator = Evaluator(_STEPS)
        try:
            args = [evaluator.value(arg, {}) for arg in call.args]
            args += [evaluator.value(k.value, {}) for k in call.keywords]
        except Unknown:
            continue
        texts.add(match.group(0))
        stack: list[object] = list(args)
        while stack and len(numbers) < _MAX_CALLS:
            item = stack.pop()
            if isinstance(item, int | float) and not isinstance(item, bool):
                numbers.append(item)
            elif isinstance(item, list | tuple):
                stack.extend(item[:_MAX_CALLS])
    return Reported(tuple(numbers), frozenset(texts))


reported_calls: IdentityCache[str, Reported] = IdentityCache(_read, _CACHE_SIZE)
"""The literal calls an instruction spells, read once per instruction text."""
