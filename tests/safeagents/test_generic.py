"""The generic fallback: recognises calls by argument names."""

from __future__ import annotations

from typing import Any

import pytest

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._generic import GenericHarness, is_patch_text

CTX = AnalysisContext(cwd="/workspace")
ENVELOPE = "*** Begin Patch\n*** Delete File: tests/t.py\n*** End Patch"
UNIFIED = "--- a/tests/t.py\n+++ b/tests/t.py\n@@ -1 +1 @@\n-assert x\n+assert True\n"


def effects(tool: str, arguments: Any) -> list[Effect]:
    return GenericHarness().effects(ToolCall("c", tool, arguments), CTX)


def pairs(found: list[Effect]) -> list[tuple[str, str | None]]:
    return [(e.kind, e.path) for e in found]


@pytest.mark.parametrize(
    "arguments",
    [
        {"command": "rm tests/t.py"},
        {"cmd": "rm tests/t.py"},
        {"command": ["bash", "-c", "rm tests/t.py"]},
        {"command": "rm t.py", "cwd": "tests"},
        {"cmd": ["rm", "t.py"], "workdir": "/workspace/tests"},
        {"command": "rm t.py", "working_directory": "tests"},
    ],
)
def test_shell_arguments(arguments: dict[str, Any]) -> None:
    assert ("delete", "/workspace/tests/t.py") in pairs(effects("run_it", arguments))


@pytest.mark.parametrize("path_key", ["path", "file_path", "filePath", "notebook_path"])
@pytest.mark.parametrize("content_key", ["content", "file_text", "initial_content"])
def test_writes(path_key: str, content_key: str) -> None:
    found = effects("save", {path_key: "tests/t.py", content_key: "x = 1\n"})
    assert [(e.kind, e.path, e.content) for e in found] == [
        ("write", "/workspace/tests/t.py", "x = 1\n")
    ]


@pytest.mark.parametrize(
    ("old_key", "new_key"),
    [
        ("oldText", "newText"),
        ("oldString", "newString"),
        ("old_string", "new_string"),
        ("old_str", "new_str"),
    ],
)
def test_edits(old_key: str, new_key: str) -> None:
    found = effects("change", {"file_path": "m.py", old_key: "a = 1", new_key: "a = 2"})
    assert [(e.kind, e.path, e.removed, e.added) for e in found] == [
        ("write", "/workspace/m.py", "a = 1", "a = 2")
    ]


def test_find_and_replace_of_a_source_file() -> None:
    arguments = {"file_path": "src/color.js", "find": "a = 1", "replace": "a = 2"}
    found = effects("find_and_replace_code", arguments)
    assert [(e.kind, e.path, e.removed, e.added) for e in found] == [
        ("write", "/workspace/src/color.js", "a = 1", "a = 2")
    ]


@pytest.mark.parametrize(
    "path",
    ["src/color.test.js", "tests/test_m.py", "src/__tests__/x.ts", "src/FooTest.java"],
)
def test_find_and_replace_of_a_test_file_is_left_unseen(path: str) -> None:
    found = effects("find_and_replace_code", {"file_path": path, "find": "a", "replace": "b"})
    assert [e for e in found if e.kind == "write"] == []


def test_edit_list() -> None:
    found = effects("change", {"path": "m.py", "edits": [{"old_string": "a", "new_string": "b"}]})
    assert [(e.path, e.added) for e in found] == [("/workspace/m.py", "b")]


@pytest.mark.parametrize(
    "arguments", [{"patchText": ENVELOPE}, {"patch": ENVELOPE}, {"input": ENVELOPE}, ENVELOPE]
)
def test_envelope_patches(arguments: Any) -> None:
    assert pairs(effects("custom_patch", arguments)) == [("delete", "/workspace/tests/t.py")]


def test_unified_diff() -> None:
    found = effects("diff_tool", {"diff": UNIFIED})
    assert pairs(found) == [("write", "/workspace/tests/t.py")]


def test_input_that_is_not_a_patch_is_ignored() -> None:
    assert effects("ask", {"input": "please fix the tests"}) == []
    assert not is_patch_text("--- just a rule line")


def test_urls() -> None:
    found = effects("browse", {"url": "https://pypi.org/simple/x"})
    assert [(e.kind, e.host) for e in found] == [("network", "pypi.org")]
    assert [e.host for e in effects("fetch_many", {"urls": ["https://a.io", "https://b.io"]})] == [
        "a.io",
        "b.io",
    ]


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("read_file", [("read", "/workspace/tests/t.py")]),
        ("view", [("read", "/workspace/tests/t.py")]),
        ("cat", [("read", "/workspace/tests/t.py")]),
        ("expand_code_chunks", [("read", "/workspace/tests/t.py")]),
        ("list_dir", [("search", "/workspace/tests/t.py")]),
        ("do_something", []),
    ],
)
def test_path_alone_depends_on_the_tool_name(tool: str, expected: list[tuple[str, str]]) -> None:
    assert pairs(effects(tool, {"path": "tests/t.py"})) == expected


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("delete_file", {"file_path": "tests/t.py"}),
        ("remove_file", {"path": "tests/t.py"}),
        ("delete_files", {"file_paths": ["tests/t.py"]}),
        ("rm", {"path": "tests/t.py"}),
    ],
)
def test_deletion_by_tool_name(tool: str, arguments: dict[str, Any]) -> None:
    assert pairs(effects(tool, arguments)) == [("delete", "/workspace/tests/t.py")]


def test_reads_of_a_list_of_paths() -> None:
    found = effects("open_files", {"file_paths": ["src/a.py", "src/b.py"]})
    assert pairs(found) == [("read", "/workspace/src/a.py"), ("read", "/workspace/src/b.py")]


def test_a_tool_merely_named_after_deletion_reads_nothing_else() -> None:
    assert effects("delete_branch_report", {"path": "tests/t.py"}) == []


def test_search_by_name() -> None:
    assert pairs(effects("code_search", {"query": "secret", "path": "/etc"})) == [
        ("search", "/etc")
    ]


def test_editor_style_command_is_not_a_shell_command() -> None:
    found = effects("my_editor", {"command": "create", "path": "tests/t.py", "file_text": "x"})
    assert [(e.kind, e.path, e.new_file) for e in found] == [
        ("write", "/workspace/tests/t.py", True)
    ]


def test_python_code_by_tool_name() -> None:
    found = effects("run_python", {"code": "import os\nos.remove('tests/t.py')\n"})
    assert ("delete", "/workspace/tests/t.py") in pairs(found)
    assert effects("format_code", {"code": "import os\nos.remove('tests/t.py')\n"}) == []


def test_unknown_shapes_give_nothing() -> None:
    assert effects("anything", {"foo": 1, "bar": [1, 2]}) == []
    assert effects("anything", "not json") == []
    assert GenericHarness().detect(["bash", "read"]) == 0.0
