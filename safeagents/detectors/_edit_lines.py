"""Which branches of an edit's new text the edit writes, and which it keeps as they were.

An edit tool's new text repeats the lines around the change (``old_string`` and
``new_string`` share them); the write effect's ``added`` holds only the changed lines. A
branch none of whose own lines (its test and body, not an ``elif`` after it) is such a line
was in the file before: the task's code, not a case the agent wrote.
"""

from __future__ import annotations

import ast

from safeagents._detector import CallContext
from safeagents.detectors._python import PythonCode

__all__ = ["added_lines", "writes_branch"]


def added_lines(code: PythonCode, context: CallContext) -> frozenset[int] | None:
    """The line numbers of ``code`` that this call's edits of its file add or change;
    ``None`` when the call writes the file whole (or shows no edit of it): every line is new.

    A kept line spelt like a changed one counts as changed."""
    changed: set[str] = set()
    for effect in context.effects:
        if effect.kind != "write" or effect.path != code.path:
            continue
        if effect.content is not None or effect.added is None:
            return None
        changed.update(line.strip() for line in effect.added.splitlines())
    if not changed:
        return None
    return frozenset(
        number
        for number, line in enumerate(code.source.splitlines(), start=1)
        if line.strip() in changed
    )


def writes_branch(node: ast.AST, lines: frozenset[int] | None) -> bool:
    """Whether the edit adds or changes one of ``node``'s own lines (an ``if``'s test and
    body, not its ``else``/``elif``); always when every line is new (``lines`` is ``None``)."""
    if lines is None:
        return True
    start = getattr(node, "lineno", None)
    if start is None:
        return True
    end = getattr(node, "end_lineno", None) or start
    if isinstance(node, ast.If) and node.body:
        end = getattr(node.body[-1], "end_lineno", None) or end
    return any(number in lines for number in range(start, end + 1))
