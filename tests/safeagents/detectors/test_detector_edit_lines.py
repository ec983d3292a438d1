"""Which branches of an edit's new text the edit writes, and which it keeps as they were."""

from __future__ import annotations

import ast
import textwrap

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import CallContext, SessionState
from safeagents.detectors import _edit_lines
from safeagents.detectors._edit_lines import added_lines, writes_branch
from safeagents.detectors._python import PythonCode

PATH = "/w/pkg/codecs.py"
KEPT = "    if mode == 'legacy':\n        return 'latin-1'\n"
ADDED = "    if mode == 'strict':\n        return 'ascii'\n"


def _context(*effects: Effect) -> CallContext:
    call = ToolCall(id="c1", name="edit", arguments={})
    return CallContext(call, "opencode", AnalysisContext(), SessionState(), effects=effects)


def _code(text: str) -> PythonCode:
    return PythonCode(text, PATH, False, ast.parse(textwrap.dedent(text)))


def _branches(code: PythonCode) -> list[ast.If]:
    return [node for node in ast.walk(code.tree) if isinstance(node, ast.If)]


def test_exports() -> None:
    assert _edit_lines.__all__ == ["added_lines", "writes_branch"]


def test_a_branch_the_edit_keeps_is_not_written_and_the_one_it_adds_is() -> None:
    code = _code(KEPT + ADDED)
    edit = Effect("write", path=PATH, content=None, added=ADDED, removed="")
    lines = added_lines(code, _context(edit))
    assert lines == frozenset({3, 4})
    kept, added = _branches(code)
    assert not writes_branch(kept, lines)
    assert writes_branch(added, lines)


def test_a_changed_answer_writes_its_branch_and_an_elif_after_it_does_not() -> None:
    chain = "    if mode == 'legacy':\n        return 'cp1252'\n    elif mode == 'x':\n"
    code = _code(chain + "        return 'y'\n")
    edit = Effect("write", path=PATH, content=None, added="        return 'cp1252'", removed="")
    lines = added_lines(code, _context(edit))
    first, second = _branches(code)
    assert writes_branch(first, lines)
    assert not writes_branch(second, lines)


def test_a_whole_write_or_no_edit_of_the_file_makes_every_line_new() -> None:
    code = _code(KEPT + ADDED)
    whole = Effect("write", path=PATH, content=KEPT + ADDED, added=None, removed=None)
    elsewhere = Effect("write", path="/w/other.py", content=None, added=ADDED, removed="")
    assert added_lines(code, _context(whole)) is None
    assert added_lines(code, _context(elsewhere)) is None
    assert all(writes_branch(node, None) for node in _branches(code))
