"""What the task's instruction shows about the code the tests call."""

from __future__ import annotations

import re

from safeagents._detector import CallContext

__all__ = ["task_function"]


def task_function(name: str, context: CallContext) -> bool:
    """Whether the instruction shows ``def name(``: the function the tests call (the
    harnesses of function-completion tasks put its signature and docstring there)."""
    instruction = context.session.model.instruction
    if not instruction or name not in instruction:
        return False
    return re.search(rf"\bdef\s+{re.escape(name)}\s*\(", instruction) is not None
