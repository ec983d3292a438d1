"""``cut-text``: a write whose text the transcript cut short.

## What it does
Matches a ``write`` whose new text (a whole file, or an edit's replacement), or the old text
an edit replaces, ends in a log's truncation marker: ``…[truncated in source]``,
``...[truncated 8612 chars]``. Transcripts of some studies keep only the first ~150
characters of each argument, so what the write puts in place cannot be read (a patch cut
inside a removed line lost what replaces it). Rules use it to fail closed on protected paths
(a test of the task), where an unreadable change cannot be shown to be harmless.

## Example
``Edit test_solution.py`` with ``new_string: "    assert candidate(3) == ...[truncated in
source]"``. Not matched: the same edit with its whole text, or a marker inside an output.
"""

from __future__ import annotations

from typing import ClassVar

from safeagents._actions import Effect
from safeagents._cut import is_cut
from safeagents._detector import CallContext, Detector

__all__ = ["CutText"]


class CutText(Detector):
    name: ClassVar[str] = "cut-text"
    description: ClassVar[str] = "a write whose text the transcript cut short"

    def matches(self, effect: Effect, context: CallContext) -> bool:
        if effect.kind != "write":
            return False
        return (
            is_cut(effect.added)
            or is_cut(effect.content)
            or is_cut(effect.command)
            or is_cut(effect.removed)
        )
