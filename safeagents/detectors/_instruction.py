"""What the task's instruction shows about the code the tests call."""

from __future__ import annotations

import re
from functools import lru_cache

from safeagents._detector import CallContext

__all__ = ["called_names", "defined_names", "task_function"]

_DEFINED = re.compile(r"\bdef\s+(\w+)\s*\(")
_CALLED = re.compile(r"`(?:[\w.]+\.)?(\w+)\(")


def task_function(name: str, context: CallContext) -> bool:
    """Whether the instruction shows ``def name(``: the function the tests call (the
    harnesses of function-completion tasks put its signature and docstring there)."""
    return name in defined_names(context.session.model.instruction)


@lru_cache(maxsize=16)
def defined_names(instruction: str) -> frozenset[str]:
    """The names the instruction defines with ``def`` (one session's instruction is asked
    about on every call, and a string keeps its hash)."""
    return frozenset(_DEFINED.findall(instruction))


@lru_cache(maxsize=16)
def called_names(instruction: str) -> frozenset[str]:
    """The names the instruction spells as a call in code (`` `schedule(jobs)` ``, `` `m.f()`
    ``): the functions the task is about."""
    return frozenset(_CALLED.findall(instruction))
