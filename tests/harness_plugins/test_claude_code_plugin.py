"""Claude Code: capitalised tools and ``file_path`` arguments."""

from __future__ import annotations

from typing import Any

import pytest

from harness_plugins.claude_code import ClaudeCodeHarness
from safeagents._actions import AnalysisContext, Effect, ToolCall

CTX = AnalysisContext(cwd="/repo")


def effects(tool: str, arguments: Any) -> list[Effect] | None:
    return ClaudeCodeHarness().effects(ToolCall("toolu_1", tool, arguments), CTX)


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "Read",
            {"file_path": "/repo/tests/test_x.py", "limit": 20},
            [("read", "/repo/tests/test_x.py")],
        ),
        (
            "Write",
            {"file_path": "conftest.py", "content": "import pytest\n"},
            [("write", "/repo/conftest.py")],
        ),
        ("Glob", {"pattern": "**/*.py"}, [("search", "/repo")]),
        ("Grep", {"pattern": "expected", "path": "/tests", "-n": True}, [("search", "/tests")]),
        ("LS", {"path": "/oracle"}, [("search", "/oracle")]),
        ("TodoWrite", {"todos": [{"content": "fix", "status": "pending"}]}, []),
        ("Agent", {"description": "d", "prompt": "rm -rf tests", "subagent_type": "general"}, []),
        ("BashOutput", {"bash_id": "b1"}, []),
        ("KillShell", {"shell_id": "b1"}, []),
    ],
)
def test_tools(tool: str, arguments: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    found = effects(tool, arguments)
    assert found is not None
    assert [(e.kind, e.path) for e in found] == expected


def test_edit_and_replace_all() -> None:
    found = effects(
        "Edit",
        {
            "file_path": "tests/t.py",
            "old_string": "assert x",
            "new_string": "pass",
            "replace_all": True,
        },
    )
    assert found is not None
    assert [(e.kind, e.path, e.removed, e.added) for e in found] == [
        ("write", "/repo/tests/t.py", "assert x", "pass")
    ]


def test_multi_edit() -> None:
    edits = [
        {"old_string": "a", "new_string": "b"},
        {"old_string": "c", "new_string": "d", "replace_all": True},
    ]
    found = effects("MultiEdit", {"file_path": "src/m.py", "edits": edits})
    assert found is not None
    assert [(e.path, e.added) for e in found] == [("/repo/src/m.py", "b"), ("/repo/src/m.py", "d")]


def test_notebook_edit_adds_the_new_source() -> None:
    found = effects(
        "NotebookEdit", {"notebook_path": "nb.ipynb", "cell_id": "c1", "new_source": "x = 1"}
    )
    assert found is not None
    assert [(e.kind, e.path, e.added) for e in found] == [("write", "/repo/nb.ipynb", "x = 1")]


def test_web_tools() -> None:
    fetched = effects(
        "WebFetch", {"url": "https://github.com/org/repo/pull/7.patch", "prompt": "p"}
    )
    searched = effects("WebSearch", {"query": "django ticket 1234 fix"})
    assert fetched == [
        Effect("network", url="https://github.com/org/repo/pull/7.patch", host="github.com")
    ]
    assert searched == [Effect("network", pattern="django ticket 1234 fix")]


def test_bash_delete() -> None:
    found = effects("Bash", {"command": "rm -f tests/test_x.py", "description": "remove"})
    assert found is not None
    assert ("delete", "/repo/tests/test_x.py") in [(e.kind, e.path) for e in found]


def test_mcp_tools_fall_through() -> None:
    assert effects("mcp__fs__write", {"path": "a", "content": "b"}) is None
