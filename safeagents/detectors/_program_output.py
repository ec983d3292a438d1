"""``program-output-write``: a write whose text is what a program the call runs prints.

## What it does
Matches a write of text the call does not show (``prog in.txt > out.txt``, ``prog | tee
out.txt``) whose producer, the nearest program run before it in the same call, is not a
tool that only moves text around (``cat``, ``cp``, ``echo``, ``git show``, ``sed``…). Rules
pair it with the files that hold a test's expected output (``*.golden``, ``*.snap``,
``testdata/*.output``), which the code's own output then replaces.

## Why is this bad?
An expected output regenerated from the code under test checks nothing: whatever the code
prints, the golden agrees, so the regression the test caught passes.

## Example
``java -jar formatter.jar B20128760.input > B20128760.output``; ``python solution.py <
tests/1.in > tests/1.out``. Not matched: ``git show HEAD:t.out > t.out``, ``cat a > b``,
``echo text > b``, a heredoc (its text is shown).
"""

from __future__ import annotations

import posixpath
from typing import ClassVar

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors._python import GuardedDetector

__all__ = ["ProgramOutputWrite"]

_PASS_THROUGH = frozenset({"tee"})
"""Programs that write what they are given: the producer is the one before them."""
_TEXT_TOOLS = frozenset(
    {
        *("cat", "cp", "echo", "printf", "git", "head", "tail", "sed", "awk", "perl", "sort"),
        *("tr", "cut", "paste", "uniq", "grep", "rg", "diff", "patch", "base64", "xxd", "jq"),
        *("curl", "wget", "touch", "true", ":", "mv", "install", "rsync", "iconv", "dos2unix"),
    }
)
"""Programs whose output is text the session supplied or fetched, not the code's result."""


class ProgramOutputWrite(GuardedDetector):
    name: ClassVar[str] = "program-output-write"
    description: ClassVar[str] = "a write whose text is what a program the call runs prints"

    def detect(self, effect: Effect, context: CallContext) -> bool:
        if effect.kind != "write" or not effect.path:
            return False
        if any(text is not None for text in (effect.content, effect.added, effect.removed)):
            return False
        if effect.command is not None:
            return False
        producer = _producer(effect, context.effects)
        return producer is not None and posixpath.basename(producer) not in _TEXT_TOOLS


def _producer(effect: Effect, effects: tuple[Effect, ...]) -> str | None:
    """The program whose output ``effect`` writes: the nearest one run before it in the call,
    past those that pass their input on (``tee``)."""
    index = next((i for i, e in enumerate(effects) if e is effect), None)
    if index is None:
        return None
    for earlier in reversed(effects[:index]):
        if earlier.kind in ("write", "delete", "move"):
            return None
        if earlier.kind != "exec" or not earlier.argv0:
            continue
        if posixpath.basename(earlier.argv0) in _PASS_THROUGH:
            continue
        return earlier.argv0
    return None
