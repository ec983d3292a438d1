"""Hermes Agent: terminal, file tools, both ``patch`` modes and ``execute_code`` unwrapping."""

from __future__ import annotations

from typing import Any

import pytest

from harness_plugins.hermes import HermesHarness
from safeagents._actions import AnalysisContext, Effect, ToolCall

CTX = AnalysisContext(cwd="/workspace")


def effects(tool: str, arguments: Any) -> list[Effect]:
    found = HermesHarness().effects(ToolCall("call_1", tool, arguments), CTX)
    assert found is not None
    return found


def pairs(found: list[Effect]) -> list[tuple[str, str | None]]:
    return [(e.kind, e.path) for e in found]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "read_file",
            {"path": "tests/test_a.py", "offset": 1, "limit": 500},
            [("read", "/workspace/tests/test_a.py")],
        ),
        (
            "write_file",
            {"path": "/workspace/a.py", "content": "x = 1\n"},
            [("write", "/workspace/a.py")],
        ),
        (
            "search_files",
            {"pattern": "expected", "target": "content", "path": "/tests"},
            [("search", "/tests")],
        ),
        ("search_files", {"pattern": "*.json", "target": "files"}, [("search", "/workspace")]),
        (
            "vision_analyze",
            {"image_url": "/workspace/plot.png", "question": "q"},
            [("read", "/workspace/plot.png")],
        ),
        ("process", {"action": "poll", "session_id": "p1"}, []),
        ("todo", {"todos": []}, []),
        ("delegate_task", {"goal": "g"}, []),
        ("skill_view", {"name": "n"}, []),
    ],
)
def test_tools(tool: str, arguments: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert pairs(effects(tool, arguments)) == expected


def test_terminal_with_workdir() -> None:
    found = effects(
        "terminal", {"command": "rm test_a.py", "workdir": "/workspace/tests", "timeout": 60}
    )
    assert ("delete", "/workspace/tests/test_a.py") in pairs(found)


def test_process_write_is_shell_input() -> None:
    found = effects("process", {"action": "submit", "session_id": "p1", "data": "rm tests/t.py"})
    assert ("delete", "/workspace/tests/t.py") in pairs(found)


def test_patch_replace_mode() -> None:
    arguments = {
        "mode": "replace",
        "path": "src/m.py",
        "old_string": "a",
        "new_string": "b",
        "replace_all": False,
    }
    assert [(e.path, e.removed, e.added) for e in effects("patch", arguments)] == [
        ("/workspace/src/m.py", "a", "b")
    ]


def test_patch_default_mode_is_replace() -> None:
    found = effects("patch", {"path": "m.py", "old_string": "a", "new_string": "b"})
    assert pairs(found) == [("write", "/workspace/m.py")]


@pytest.mark.parametrize("mode", ["patch", None])
def test_patch_envelope_mode(mode: str | None) -> None:
    text = (
        "*** Begin Patch\n*** Update File: tests/t.py\n@@\n"
        "-assert f() == 1\n+assert True\n*** End Patch"
    )
    arguments = {"patch": text} if mode is None else {"mode": mode, "patch": text}
    found = effects("patch", arguments)
    assert pairs(found) == [("write", "/workspace/tests/t.py")]
    assert "assert True" in (found[0].added or "")


def test_web_tools() -> None:
    found = effects("web_extract", {"urls": ["https://a.example/x", "https://b.example/y", 3]})
    assert [e.host for e in found] == ["a.example", "b.example"]
    assert effects("web_search", {"query": "q"}) == [Effect("network", pattern="q")]
    assert [e.url for e in effects("browser_navigate", {"url": "https://c.example"})] == [
        "https://c.example"
    ]
    assert effects("browser_snapshot", {}) == []


def test_execute_code_maps_hermes_tools_calls() -> None:
    code = (
        "from hermes_tools import terminal, write_file as wf, read_file\n"
        "import hermes_tools as ht\n"
        "terminal('rm tests/test_a.py')\n"
        "wf('tests/test_b.py', 'def test(): pass')\n"
        "read_file(path='/oracle/answer.txt')\n"
        "ht.patch('m.py', 'a', 'b')\n"
    )
    found = pairs(effects("execute_code", {"code": code}))
    assert ("delete", "/workspace/tests/test_a.py") in found
    assert ("write", "/workspace/tests/test_b.py") in found
    assert ("read", "/oracle/answer.txt") in found
    assert ("write", "/workspace/m.py") in found


def test_execute_code_dynamic_arguments() -> None:
    code = "from hermes_tools import terminal\nterminal(input())\n"
    found = effects("execute_code", {"code": code})
    assert any(e.kind == "exec" and e.opaque for e in found)


def test_execute_code_plain_python_is_analysed() -> None:
    found = effects("execute_code", {"code": "import os\nos.remove('tests/test_a.py')\n"})
    assert ("delete", "/workspace/tests/test_a.py") in pairs(found)


def test_execute_code_syntax_error_is_tolerated() -> None:
    assert isinstance(
        effects("execute_code", {"code": "from hermes_tools import terminal\nterminal('"}), list
    )
