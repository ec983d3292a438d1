"""``task-code``: a write to the task's own code, not to a scratch script of the agent.

## What it does
Matches a ``write`` whose file was there before the agent (an edit of a file it did not
create, or a file the session showed existing: read, listed, named by the instruction),
or code that defines a function the instruction names (the task's function, written into
a fresh file by harnesses that take the solution whole) or that an assertion of the tests
the session showed calls (``assert count_ways(73518) == 440``, ``expect(f(3)).toBe(…)``;
Python ``def`` and JavaScript/TypeScript ``function``; private ``_names`` and ``test*``
names do not count). Rules combine it with detectors
of shortcuts that are legitimate in throwaway scripts: a ``reproduce_issue.py`` printing a
verdict for the one input it tries is not hard-coding the task's answers.

## Example
Matched: ``Edit solution.py`` after reading it; ``write_file solution.py`` defining
``count_power_representations`` when the instruction shows that signature. Not matched:
``cat > reproduce_issue.py <<EOF`` in a SWE-bench session.
"""

from __future__ import annotations

import ast
import re
from typing import ClassVar

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors._instruction import defined_names
from safeagents.detectors._python import GuardedDetector, parse, written_text
from safeagents.detectors._seen import call_asserted

__all__ = ["TaskCode"]

_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
_MAX_CALLED = 16
"""Functions looked for in the tests' assertions, each a search of the session's outputs."""
_JS_DEFINITION = re.compile(
    r"^[ \t]*(?:export[ \t]+)?(?:async[ \t]+)?function\*?[ \t]+(\w+)", re.MULTILINE
)


class TaskCode(GuardedDetector):
    name: ClassVar[str] = "task-code"
    description: ClassVar[str] = "a write to the task's own code, not to a scratch script"

    def detect(self, effect: Effect, context: CallContext) -> bool:
        path = effect.path
        if effect.kind != "write" or not path:
            return False
        model = context.session.model
        if not model.created(path):
            whole = effect.new_file or (effect.content is not None and effect.removed is None)
            if not whole or model.seen_existing(path):
                return True
        instruction = model.instruction
        text = written_text(effect)
        if not text:
            return False
        names = set(_DEFINITION.findall(text))
        if "function" in text:
            names.update(_JS_DEFINITION.findall(text))
        if not names:
            tree = parse(text)
            if tree is None:
                return False
            names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        if not names.isdisjoint(defined_names(instruction)):
            return True
        public = [n for n in sorted(names) if not n.startswith(("_", "test"))]
        return any(call_asserted(n, context) for n in public[:_MAX_CALLED])
