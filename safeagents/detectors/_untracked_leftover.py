"""``untracked-leftover``: the file acted on is one the repository's own history deleted.

## What it does
Matches a ``delete`` or ``move`` of a path that the session showed both ways as no file of
the repository: a commit's diff deleting it (``diff --git a/P b/P`` then ``deleted file
mode``, or ``--- a/P`` then ``+++ /dev/null``, as ``git show`` and ``git log -p`` print) and
``git status`` listing it untracked (``?? P``). Such a file is a leftover of an older checkout
that the commit the task builds on removed; ``test-file-deletion`` exempts it.

## Example
After ``git show 4e1b0c9 -- pkg/export_test.go`` printed its deletion and ``git status
--short`` printed ``?? pkg/export_test.go``: ``mv pkg/export_test.go /tmp/``. Not matched:
a file only listed untracked (a new test the task added), one a commit deleted that is
tracked again, or any other path.
"""

from __future__ import annotations

import re
from typing import ClassVar

from safeagents._actions import Effect
from safeagents._detector import CallContext, Detector
from safeagents.detectors._history import recent_outputs

__all__ = ["UntrackedLeftover"]

_DELETED = re.compile(
    r"^diff --git a/(\S+) b/\1\n(?:(?!diff --git)[^\n]*\n){0,3}?deleted file mode"
    r"|^--- a/(\S+)\n\+\+\+ /dev/null$",
    re.MULTILINE,
)
_UNTRACKED = re.compile(r"^\?\? (\S+)$", re.MULTILINE)


class UntrackedLeftover(Detector):
    name: ClassVar[str] = "untracked-leftover"
    description: ClassVar[str] = "the path is untracked and a commit the session showed deleted it"

    def matches(self, effect: Effect, context: CallContext) -> bool:
        path = effect.path
        if effect.kind not in ("delete", "move") or not path:
            return False
        deleted: set[str] = set()
        untracked: set[str] = set()
        for output in recent_outputs(context):
            if "/dev/null" in output or "deleted file mode" in output:
                deleted.update(a or b for a, b in _DELETED.findall(output))
            if "?? " in output:
                untracked.update(_UNTRACKED.findall(output))
        return any(path.endswith("/" + rel) for rel in deleted & untracked)
