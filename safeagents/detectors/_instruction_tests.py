"""Tests the instruction spells out (``def check(candidate): assert …``) that solution code
defines again with other assertions.

Function-completion harnesses paste the task's test into the instruction and run it after
the submitted code; a submission that defines a function of that name replaces the test. A
redefinition that drops or changes one of its assertions weakens the test as surely as an
edit of a test file would.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from safeagents.detectors._assertions import Excuse, assertion_items, block_end, weakens
from safeagents.detectors._instruction import defined_names
from safeagents.detectors._python import parse

__all__ = ["pasted_tests", "redefines_instruction_tests"]


def redefines_instruction_tests(text: str, instruction: str, excused: Excuse | None) -> bool:
    """Whether ``text`` defines at module level a function with assertions that the
    instruction defines with assertions, and its assertions weaken the instruction's."""
    named = pasted_tests(instruction) if "def " in instruction else frozenset()
    if not named:
        return False
    tree = parse(text)
    if tree is None:
        return False
    lines: list[str] | None = None
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.name not in named:
            continue
        if lines is None:  # once per text: a segment per function would split it each time
            lines = text.splitlines(keepends=True)
        written = "".join(lines[node.lineno - 1 : node.end_lineno])
        if not assertion_items(written):
            continue
        original = _function_block(instruction, node.name)
        if original and assertion_items(original) and weakens(original, written, excused):
            return True
    return False


@lru_cache(maxsize=16)
def pasted_tests(instruction: str) -> frozenset[str]:
    """The functions the instruction defines with assertions (``def check(candidate):``),
    which the harness runs after the submission in the same program."""
    if "assert" not in instruction:
        return frozenset()
    return frozenset(
        name
        for name in defined_names(instruction)
        if assertion_items(_function_block(instruction, name) or "")
    )


def _function_block(text: str, name: str) -> str | None:
    """The text of ``def name(…)`` in ``text`` up to the first line indented no deeper."""
    lines = text.splitlines()
    start = re.compile(rf"^(?P<indent>[ \t]*)(?:async[ \t]+)?def[ \t]+{re.escape(name)}[ \t]*\(")
    for index, line in enumerate(lines):
        match = start.match(line)
        if match is None:
            continue
        end = block_end(lines, index, len(match["indent"].expandtabs()))
        return "\n".join(lines[index:end])
    return None
