"""SWE-agent and OpenHands: shell tools, the file editor and IPython cells."""

from __future__ import annotations

from typing import Any

import pytest

from harness_plugins.swe_agent import SweAgentHarness
from safeagents._actions import AnalysisContext, Effect, ToolCall

CTX = AnalysisContext(cwd="/testbed")


def effects(tool: str, arguments: Any) -> list[Effect]:
    found = SweAgentHarness().effects(ToolCall("call_1", tool, arguments), CTX)
    assert found is not None
    return found


def pairs(found: list[Effect]) -> list[tuple[str, str | None]]:
    return [(e.kind, e.path) for e in found]


@pytest.mark.parametrize("tool", ["bash", "execute_bash", "terminal"])
def test_shell_tools(tool: str) -> None:
    assert ("delete", "/testbed/tests/t.py") in pairs(effects(tool, {"command": "rm tests/t.py"}))


@pytest.mark.parametrize("tool", ["str_replace_editor", "file_editor"])
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"command": "view", "path": "/testbed/tests"}, ("read", "/testbed/tests", False)),
        (
            {"command": "create", "path": "tests/t2.py", "file_text": "x"},
            ("write", "/testbed/tests/t2.py", True),
        ),
        (
            {"command": "str_replace", "path": "m.py", "old_str": "a", "new_str": "b"},
            ("write", "/testbed/m.py", False),
        ),
        (
            {"command": "insert", "path": "m.py", "insert_line": 3, "new_str": "b"},
            ("write", "/testbed/m.py", False),
        ),
        ({"command": "undo_edit", "path": "m.py"}, ("write", "/testbed/m.py", False)),
    ],
)
def test_editor(tool: str, arguments: dict[str, Any], expected: tuple[str, str, bool]) -> None:
    assert [(e.kind, e.path, e.new_file) for e in effects(tool, arguments)] == [expected]


def test_editor_str_replace_diff_fields() -> None:
    found = effects(
        "str_replace_editor",
        {"command": "str_replace", "path": "t.py", "old_str": "assert a", "new_str": "pass"},
    )
    assert (found[0].removed, found[0].added) == ("assert a", "pass")


def test_editor_unknown_command_or_missing_path() -> None:
    assert effects("str_replace_editor", {"command": "explode", "path": "m.py"}) == []
    assert effects("str_replace_editor", {"command": "view"}) == []


def test_ipython_cell_python_and_shell_escapes() -> None:
    code = "import shutil\nshutil.rmtree('tests')\n!rm setup.cfg\nout = !rm tox.ini\n%cd /tmp\n"
    found = pairs(effects("execute_ipython_cell", {"code": code}))
    assert ("delete", "/testbed/tests") in found
    assert ("delete", "/testbed/setup.cfg") in found
    assert ("delete", "/testbed/tox.ini") in found


def test_ipython_bash_cell_magic() -> None:
    found = pairs(effects("execute_ipython_cell", {"code": "%%bash\nrm tests/t.py\n"}))
    assert ("delete", "/testbed/tests/t.py") in found


def test_fetch_and_browser() -> None:
    assert [e.host for e in effects("fetch", {"url": "https://github.com/o/r"})] == ["github.com"]
    assert [e.host for e in effects("web_read", {"url": "https://docs.python.org/3/"})] == [
        "docs.python.org"
    ]
    found = effects("browser", {"code": "goto('https://example.com/a')\nclick('12')"})
    assert [e.url for e in found] == ["https://example.com/a"]


@pytest.mark.parametrize("tool", ["think", "finish", "submit", "task_tracker"])
def test_no_effect_tools(tool: str) -> None:
    assert effects(tool, {"thought": "rm -rf tests", "message": "done"}) == []


def test_windowed_tools() -> None:
    assert pairs(effects("open", {"path": "src/m.py", "line_number": 10})) == [
        ("read", "/testbed/src/m.py")
    ]
    assert pairs(effects("create", {"filename": "new.py"})) == [("write", "/testbed/new.py")]
    assert pairs(effects("search_dir", {"search_term": "expected", "dir": "/tests"})) == [
        ("search", "/tests")
    ]
