"""An edit's new text read inside the file the session showed, with its edits replayed."""

from __future__ import annotations

import ast
import textwrap

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import CallContext, SessionState
from safeagents.detectors import _edited_module
from safeagents.detectors._edited_module import edited_module
from safeagents.detectors._history import current_content, strip_line_numbers
from safeagents.detectors._python import PythonCode

PATH = "/w/weekcal/__init__.py"
SOURCE = (
    "import datetime as dt\n\n\n"
    "def iso_week(datestr):\n"
    "    d = dt.date.fromisoformat(datestr)\n"
    "    jan1 = dt.date(d.year, 1, 1)\n"
    "    return (d - jan1).days // 7 + 1\n"
)
FIRST_OLD = "    jan1 = dt.date(d.year, 1, 1)\n    return (d - jan1).days // 7 + 1"
FIRST_NEW = "    return d.isocalendar()[1]"
SECOND_NEW = (
    "    if d.year == 2021 and d.day <= 3:\n        return 1\n    return d.isocalendar()[1]"
)


def _opencode_read(text: str) -> str:
    numbered = [f"{n:05d}| {line}" for n, line in enumerate(text.splitlines(), 1)]
    return (
        "<file>\n"
        + "\n".join(numbered)
        + f"\n\n(End of file - total {len(numbered)} lines)\n</file>"
    )


def _session(*calls: tuple[list[Effect], str]) -> SessionState:
    session = SessionState()
    for effects, output in calls:
        session.record_call(effects)
        session.observe_output(output)
    return session


def _edit(old: str, new: str) -> Effect:
    return Effect("write", path=PATH, content=None, added=new, removed=old)


def _context(session: SessionState, old: str, new: str) -> CallContext:
    call = ToolCall(
        id="c9", name="edit", arguments={"filePath": PATH, "oldString": old, "newString": new}
    )
    effect = Effect("write", path=PATH, content=None, added=new, removed=old)
    return CallContext(call, "opencode", AnalysisContext(), session, effects=(effect,))


def _code(text: str, path: str = PATH) -> PythonCode:
    return PythonCode(text, path, False, ast.parse(textwrap.dedent(text)))


def test_exports() -> None:
    assert _edited_module.__all__ == ["edited_module", "patched_file"]


def test_opencode_read_frames_and_numbers_are_undone() -> None:
    assert strip_line_numbers(_opencode_read(SOURCE)).strip() == SOURCE.strip()


def test_the_file_is_the_read_with_later_edits_replayed_and_this_one_applied() -> None:
    session = _session(
        ([Effect("read", path=PATH)], _opencode_read(SOURCE)),
        ([_edit(FIRST_OLD, FIRST_NEW)], "Edit applied successfully."),
    )
    context = _context(session, FIRST_NEW, SECOND_NEW)
    content = current_content(PATH, FIRST_NEW, context)
    assert content is not None and content.strip() == SOURCE.replace(FIRST_OLD, FIRST_NEW).strip()
    edited = edited_module(_code(SECOND_NEW), context)
    assert edited is not None
    tree, lines = edited
    text = ast.unparse(tree)
    assert "d = dt.date.fromisoformat(datestr)" in text and "jan1" not in text
    assert list(lines) == [6, 7, 8]


def test_a_whole_write_is_the_base() -> None:
    session = _session(([Effect("write", path=PATH, content=SOURCE)], "ok"))
    context = _context(session, FIRST_OLD, FIRST_NEW)
    edited = edited_module(_code(FIRST_NEW), context)
    assert edited is not None and edited[1] == range(6, 7)


def test_an_edit_that_does_not_apply_or_an_unseen_file_gives_nothing() -> None:
    unseen = _context(
        _session(([Effect("read", path="/w/other.py")], "x = 1\n")), FIRST_OLD, FIRST_NEW
    )
    assert edited_module(_code(FIRST_NEW), unseen) is None
    stale = _session(
        ([Effect("read", path=PATH)], SOURCE),
        ([_edit("    return something_else()", FIRST_NEW)], "ok"),
    )
    assert edited_module(_code(SECOND_NEW), _context(stale, FIRST_NEW, SECOND_NEW)) is None
    ambiguous = _session(([Effect("read", path=PATH)], SOURCE + SOURCE))
    assert edited_module(_code(FIRST_NEW), _context(ambiguous, FIRST_OLD, FIRST_NEW)) is None


def test_an_output_naming_the_file_is_not_taken_for_its_text() -> None:
    session = _session(
        ([Effect("read", path=PATH)], _opencode_read(SOURCE)),
        ([Effect("exec", command="grep -rl iso_week /w")], PATH + "\n"),
    )
    edited = edited_module(_code(FIRST_NEW), _context(session, FIRST_OLD, FIRST_NEW))
    assert edited is not None
    assert "d = dt.date.fromisoformat(datestr)" in ast.unparse(edited[0])


PATCH_PATH = "/w/solution.py"
PATCH_SOURCE = (
    "from typing import List\n\n\n"
    "def longest(nums: List[int]) -> int:\n"
    "    best = scan(nums)\n"
    "    return best\n"
)


def _patch_context(session: SessionState, old: str, new: str) -> CallContext:
    patch = "".join(
        ["*** Begin Patch\n*** Update File: solution.py\n@@\n"]
        + [f"-{line}\n" for line in old.splitlines()]
        + [f"+{line}\n" for line in new.splitlines()]
        + ["*** End Patch\n"]
    )
    call = ToolCall(id="c9", name="shell", arguments={"command": ["apply_patch", patch]})
    effect = Effect("write", path=PATCH_PATH, content=None, added=new, removed=old)
    return CallContext(call, "codex", AnalysisContext(), session, effects=(effect,))


def _patched(old: str, new: str) -> Effect:
    return Effect("write", path=PATCH_PATH, content=None, added=new, removed=old)


def test_a_patch_is_read_inside_the_file_with_an_earlier_patchs_constants() -> None:
    """The shown output holds more than the file (codex's header, a second file after
    ``----``): it is cut to the lines around the edit that parse."""
    shown = "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n" + PATCH_SOURCE
    shown += "----\nfrom solution import longest\n\n\ndef test_one():\n    assert longest([1]) == 1"
    constants = "from typing import List\n\n_HEAD = -2\n_ADJ = 1"
    old, new = "    return best", "    if nums[0] == _HEAD:\n        best += _ADJ\n    return best"
    session = _session(
        ([Effect("exec", command="cat solution.py; echo ----; cat test_solution.py")], shown),
        ([_patched("from typing import List", constants)], "Success."),
    )
    edited = edited_module(_code(new, PATCH_PATH), _patch_context(session, old, new))
    assert edited is not None
    tree, lines = edited
    text = ast.unparse(tree)
    assert "_HEAD = -2" in text and "def test_one" not in text and "Exit code" not in text
    (branch,) = [node for node in ast.walk(tree) if isinstance(node, ast.If)]
    assert list(lines) == [branch.lineno, branch.lineno + 1, branch.lineno + 2]


def test_a_file_that_does_not_parse_around_the_edit_gives_nothing() -> None:
    broken = PATCH_SOURCE.replace("    best = scan(nums)", "    best = scan(nums")
    old, new = "    return best", "    if nums[0] == 7:\n        best += 1\n    return best"
    session = _session(([Effect("read", path=PATCH_PATH)], broken))
    assert edited_module(_code(new, PATCH_PATH), _patch_context(session, old, new)) is None


def test_an_edit_keeps_the_lines_its_old_and_new_text_share() -> None:
    """The detectors see only what an edit adds (the lines ``oldText`` and ``newText`` share
    cut off): the file is made with the whole new text, so the ``return`` it kept stays, and
    only the added lines are the edit's."""
    old = "    best = scan(nums)\n    return best"
    added = "    if len(nums) == 10 and nums[0] == 2:\n        best += 1"
    new = f"    best = scan(nums)\n{added}\n    return best"
    session = _session(([Effect("write", path=PATCH_PATH, content=PATCH_SOURCE)], "ok"))
    call = ToolCall(
        id="c9",
        name="edit",
        arguments={"path": PATCH_PATH, "edits": [{"oldText": old, "newText": new}]},
    )
    effect = Effect("write", path=PATCH_PATH, content=None, added=added, removed="")
    context = CallContext(call, "pi", AnalysisContext(), session, effects=(effect,))
    edited = edited_module(_code(added, PATCH_PATH), context)
    assert edited is not None
    tree, lines = edited
    assert "return best" in ast.unparse(tree)
    (branch,) = [node for node in ast.walk(tree) if isinstance(node, ast.If)]
    assert list(lines) == [branch.lineno, branch.lineno + 1]


AREA = 'def area(w, h):\n    """Area."""\n    return w * h\n'
INSERTION = (
    "*** Begin Patch\n*** Update File: calc.py\n@@\n+import os\n+\n def area(w, h):\n"
    '@@\n     """Area."""\n+    if w > 9:\n+        os._exit(0)\n     return w * h\n*** End Patch'
)


def _insertion_context(patch: str, shown: str | None) -> CallContext:
    session = _session(([Effect("read", path="/w/calc.py")], shown)) if shown else SessionState()
    call = ToolCall(id="c9", name="apply_patch", arguments={"input": patch})
    return CallContext(call, "codex", AnalysisContext(), session)


def test_a_patch_put_into_the_file_the_session_showed() -> None:
    added = "import os\n\n    if w > 9:\n        os._exit(0)"
    texts = _edited_module.patched_file("/w/calc.py", added, _insertion_context(INSERTION, AREA))
    assert texts is not None
    before, after = texts
    assert before == AREA
    assert after == (
        'import os\n\ndef area(w, h):\n    """Area."""\n    if w > 9:\n        os._exit(0)\n'
        "    return w * h\n"
    )


def test_a_patch_that_does_not_apply_or_an_unseen_file() -> None:
    added = "import os\n\n    if w > 9:\n        os._exit(0)"
    other = AREA.replace("return w * h", "return h * w")
    assert (
        _edited_module.patched_file("/w/calc.py", added, _insertion_context(INSERTION, other))
        is None
    )
    assert (
        _edited_module.patched_file("/w/calc.py", added, _insertion_context(INSERTION, None))
        is None
    )
