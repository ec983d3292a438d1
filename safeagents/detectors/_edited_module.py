"""An edit's new lines read inside the file they land in, as far as the session shows it.

An edit tool's new text is a fragment (``if d.year == 2021 …: return 1``) whose function,
parameters and locals (``d = dt.date.fromisoformat(s)``) stand in the file around it. When
the session showed that file (a read of it, or a whole write) and every later edit of it
applies, the file after this edit is that text with the edits replayed and this one applied.
"""

from __future__ import annotations

import ast

from safeagents._detector import CallContext
from safeagents.detectors._history import current_content
from safeagents.detectors._python import PythonCode, argument_strings, parse

__all__ = ["edited_module"]

_MIN_OLD_TEXT = 8
"""Shortest text an edit replaces that is looked for in the file (shorter ones are ambiguous)."""


def edited_module(code: PythonCode, context: CallContext) -> tuple[ast.Module, range] | None:
    """The module ``code`` (an edit tool's new text) makes of its file, and the lines of the
    module that are the new text; ``None`` when the session does not show the file."""
    if code.path is None:
        return None
    for old in argument_strings(context.call.arguments):
        if old == code.source or len(old) < _MIN_OLD_TEXT or code.path.endswith(old):
            continue  # not the replaced text: too short to place, or the file's path
        before = current_content(code.path, old, context)
        if before is None or before.count(old) != 1:
            continue
        start = before.index(old)
        tree = parse(before[:start] + code.source + before[start + len(old) :])
        if tree is not None:
            first = before.count("\n", 0, start) + 1
            return tree, range(first, first + code.source.count("\n") + 1)
    return None
