"""Codex: argv and string shell variants, apply_patch as JSON, freeform text and argv."""

from __future__ import annotations

from typing import Any

import pytest

from harness_plugins.codex import CodexHarness
from safeagents._actions import AnalysisContext, Effect, ToolCall

CTX = AnalysisContext(cwd="/workspace")
DELETE_PATCH = "*** Begin Patch\n*** Delete File: tests/test_t.py\n*** End Patch\n"
ADD_PATCH = "*** Begin Patch\n*** Add File: src/new.py\n+x = 1\n*** End Patch"


def effects(tool: str, arguments: Any) -> list[Effect]:
    found = CodexHarness().effects(ToolCall("call_1", tool, arguments), CTX)
    assert found is not None
    return found


def pairs(found: list[Effect]) -> list[tuple[str, str | None]]:
    return [(e.kind, e.path) for e in found]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("shell", {"command": ["bash", "-lc", "rm tests/t.py"], "timeout_ms": 1000}),
        ("shell", {"command": ["/bin/sh", "-c", "rm tests/t.py"]}),
        ("shell", {"command": ["rm", "tests/t.py"]}),
        ("shell", {"command": "rm tests/t.py"}),
        ("shell", {"command": ["bash", "-lc", "rm t.py"], "workdir": "tests"}),
        ("container.exec", {"command": ["bash", "-lc", "rm tests/t.py"]}),
        ("shell_command", {"command": "rm tests/t.py", "login": True}),
        ("shell_command", {"command": "rm t.py", "workdir": "/workspace/tests"}),
        ("exec_command", {"cmd": "rm tests/t.py", "tty": False}),
        ("exec_command", {"cmd": "rm t.py", "workdir": "/workspace/tests"}),
        ("local_shell", {"action": {"type": "exec", "command": ["bash", "-lc", "rm tests/t.py"]}}),
        (
            "local_shell_call",
            {"action": {"command": ["rm", "t.py"], "working_directory": "/workspace/tests"}},
        ),
        ("write_stdin", {"session_id": 3, "chars": "rm tests/t.py\n"}),
    ],
)
def test_every_shell_variant_sees_the_delete(tool: str, arguments: dict[str, Any]) -> None:
    assert ("delete", "/workspace/tests/t.py") in pairs(effects(tool, arguments))


@pytest.mark.parametrize(
    "arguments",
    [
        DELETE_PATCH,
        {"input": DELETE_PATCH},
        {"patch": DELETE_PATCH},
    ],
)
def test_apply_patch_forms(arguments: Any) -> None:
    assert pairs(effects("apply_patch", arguments)) == [("delete", "/workspace/tests/test_t.py")]


def test_apply_patch_as_argv() -> None:
    found = effects("shell", {"command": ["apply_patch", ADD_PATCH]})
    assert [(e.kind, e.path, e.new_file) for e in found] == [
        ("write", "/workspace/src/new.py", True)
    ]


def test_apply_patch_honours_workdir() -> None:
    found = effects("shell", {"command": ["apply_patch", ADD_PATCH], "workdir": "/other"})
    assert pairs(found) == [("write", "/other/src/new.py")]


def test_freeform_non_patch_text_gives_nothing() -> None:
    assert effects("apply_patch", "just words") == []


def test_no_effect_and_read_tools() -> None:
    assert effects("update_plan", {"plan": [{"step": "x", "status": "pending"}]}) == []
    assert pairs(effects("view_image", {"path": "img.png"})) == [("read", "/workspace/img.png")]
    assert effects("web_search", {"query": "q"}) == [Effect("network", pattern="q")]


def test_non_json_shell_arguments_are_opaque() -> None:
    found = effects("shell", "rm -rf tests <not json>")
    assert [(e.kind, e.opaque) for e in found] == [("exec", True)]


def test_empty_write_stdin_is_nothing() -> None:
    assert effects("write_stdin", {"session_id": 1, "chars": ""}) == []
