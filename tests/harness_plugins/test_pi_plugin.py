"""pi: real-shaped calls map to canonical effects with normalised paths."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness_plugins.pi import PiHarness
from safeagents._actions import AnalysisContext, Effect, ToolCall

CTX = AnalysisContext(cwd="/workspace")


def effects(tool: str, arguments: Any) -> list[Effect]:
    result = PiHarness().effects(ToolCall("c1", tool, arguments), CTX)
    assert result is not None
    return result


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "read",
            {"path": "src/../tests/test_a.py", "offset": 3},
            [("read", "/workspace/tests/test_a.py")],
        ),
        ("write", {"path": "./out.txt", "content": "x"}, [("write", "/workspace/out.txt")]),
        ("grep", {"pattern": "def f", "path": "src"}, [("search", "/workspace/src")]),
        ("grep", {"pattern": "TODO"}, [("search", "/workspace")]),
        ("find", {"pattern": "*.py", "path": "/tmp"}, [("search", "/tmp")]),
        ("ls", {"path": "~/notes"}, [("search", "/root/notes")]),
        ("ls", {}, [("search", "/workspace")]),
    ],
)
def test_file_tools(tool: str, arguments: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert [(e.kind, e.path) for e in effects(tool, arguments)] == expected


def test_bash_goes_through_the_shell_analyser() -> None:
    found = effects("bash", {"command": "rm tests/test_math.py", "timeout": 30})
    assert ("delete", "/workspace/tests/test_math.py") in [(e.kind, e.path) for e in found]


def test_edit_list_gives_one_edit_per_entry() -> None:
    edits = [
        {"oldText": "assert f() == 2\n", "newText": "assert True\n"},
        {"oldText": "import os\n", "newText": "import sys\n"},
    ]
    found = effects("edit", {"path": "tests/test_a.py", "edits": edits})
    assert [e.path for e in found] == ["/workspace/tests/test_a.py"] * 2
    assert all(e.kind == "write" for e in found)
    assert "assert True" in (found[0].added or "")
    assert "assert f() == 2" in (found[0].removed or "")
    assert "import sys" in (found[1].added or "")


def test_edit_list_sent_as_json_string() -> None:
    edits = json.dumps([{"oldText": "a = 1", "newText": "a = 2"}])
    found = effects("edit", {"path": "m.py", "edits": edits})
    assert [(e.kind, e.path, e.added) for e in found] == [("write", "/workspace/m.py", "a = 2")]


@pytest.mark.parametrize("path_key", ["path", "file_path"])
def test_legacy_flat_edit(path_key: str) -> None:
    found = effects("edit", {path_key: "m.py", "oldText": "x = 1", "newText": "x = 3"})
    assert [(e.kind, e.path, e.removed, e.added) for e in found] == [
        ("write", "/workspace/m.py", "x = 1", "x = 3")
    ]


def test_whole_call_as_json_string_is_decoded() -> None:
    found = effects("read", json.dumps({"path": "a.txt"}))
    assert [(e.kind, e.path) for e in found] == [("read", "/workspace/a.txt")]


def test_unknown_tool_is_left_to_the_fallback() -> None:
    assert PiHarness().effects(ToolCall("c", "mcp_tool", {}), CTX) is None
