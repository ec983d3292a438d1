"""opencode: ``filePath`` tools, empty-``oldString`` writes and recursive ``batch``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness_plugins.opencode import OpencodeHarness
from safeagents._actions import AnalysisContext, Effect, ToolCall

CTX = AnalysisContext(cwd="/home/u/proj", home="/home/u")


def effects(tool: str, arguments: Any) -> list[Effect]:
    found = OpencodeHarness().effects(ToolCall("call_1", tool, arguments), CTX)
    assert found is not None
    return found


def pairs(found: list[Effect]) -> list[tuple[str, str | None]]:
    return [(e.kind, e.path) for e in found]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("read", {"filePath": "/home/u/proj/tests/a.py"}, [("read", "/home/u/proj/tests/a.py")]),
        ("read", {"path": "tests/a.py"}, [("read", "/home/u/proj/tests/a.py")]),
        ("write", {"filePath": "~/x.txt", "content": "c"}, [("write", "/home/u/x.txt")]),
        ("write", {"path": "x.txt", "content": "c"}, [("write", "/home/u/proj/x.txt")]),
        ("glob", {"pattern": "**/test_*.py"}, [("search", "/home/u/proj")]),
        (
            "grep",
            {"pattern": "assert", "path": "tests", "include": "*.py"},
            [("search", "/home/u/proj/tests")],
        ),
        ("list", {"path": "/solution", "ignore": ["x"]}, [("search", "/solution")]),
        ("todowrite", {"todos": []}, []),
        ("task", {"description": "d", "prompt": "p", "subagent_type": "general"}, []),
    ],
)
def test_tools(tool: str, arguments: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert pairs(effects(tool, arguments)) == expected


def test_edit_with_empty_old_string_is_a_whole_write() -> None:
    found = effects(
        "edit", {"filePath": "tests/t.py", "oldString": "", "newString": "def test(): pass\n"}
    )
    assert [(e.kind, e.path, e.content) for e in found] == [
        ("write", "/home/u/proj/tests/t.py", "def test(): pass\n")
    ]


def test_edit_replace() -> None:
    arguments = {
        "filePath": "m.py",
        "oldString": "return 1",
        "newString": "return 2",
        "replaceAll": True,
    }
    found = effects("edit", arguments)
    assert [(e.path, e.removed, e.added) for e in found] == [
        ("/home/u/proj/m.py", "return 1", "return 2")
    ]


def test_multiedit() -> None:
    edits = [
        {"oldString": "a", "newString": "b"},
        {"filePath": "other.py", "oldString": "c", "newString": "d"},
    ]
    found = effects("multiedit", {"filePath": "m.py", "edits": edits})
    assert [(e.path, e.added) for e in found] == [
        ("/home/u/proj/m.py", "b"),
        ("/home/u/proj/other.py", "d"),
    ]


@pytest.mark.parametrize("tool", ["apply_patch", "patch"])
def test_patch_tools(tool: str) -> None:
    text = "*** Begin Patch\n*** Delete File: tests/test_a.py\n*** End Patch"
    assert pairs(effects(tool, {"patchText": text})) == [("delete", "/home/u/proj/tests/test_a.py")]


def test_bash_with_workdir() -> None:
    found = effects("bash", {"command": "rm test_a.py", "workdir": "tests", "description": "rm"})
    assert ("delete", "/home/u/proj/tests/test_a.py") in pairs(found)


def test_webfetch() -> None:
    found = effects(
        "webfetch", {"url": "https://raw.githubusercontent.com/o/r/main/sol.py", "format": "text"}
    )
    assert [(e.kind, e.host) for e in found] == [("network", "raw.githubusercontent.com")]


def test_batch_is_unwrapped_recursively() -> None:
    inner_batch = {"tool_calls": [{"tool": "read", "parameters": {"filePath": "deep.py"}}]}
    arguments = {
        "tool_calls": [
            {"tool": "write", "parameters": {"filePath": "tests/t.py", "content": "x"}},
            {"tool": "bash", "parameters": {"command": "rm tests/u.py", "description": "d"}},
            {
                "tool": "edit",
                "parameters": json.dumps({"filePath": "e.py", "oldString": "", "newString": "y"}),
            },
            {"tool": "mcp_fs_read", "parameters": {"path": "p.txt"}},
            {"tool": "batch", "parameters": inner_batch},
            {"tool": "todowrite", "parameters": {"todos": []}},
            "not an entry",
            {"tool": 5, "parameters": {}},
        ]
    }
    found = pairs(effects("batch", arguments))
    assert found[0] == ("write", "/home/u/proj/tests/t.py")
    assert ("delete", "/home/u/proj/tests/u.py") in found
    assert ("write", "/home/u/proj/e.py") in found
    assert ("read", "/home/u/proj/p.txt") in found
    assert found[-1] == ("read", "/home/u/proj/deep.py")


def test_batch_nesting_is_bounded() -> None:
    arguments: dict[str, Any] = {"tool_calls": [{"tool": "read", "parameters": {"filePath": "a"}}]}
    for _ in range(10):
        arguments = {"tool_calls": [{"tool": "batch", "parameters": arguments}]}
    found = effects("batch", arguments)
    assert [(e.kind, e.opaque) for e in found] == [("exec", True)]
