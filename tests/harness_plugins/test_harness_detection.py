"""Each harness's real default tool list is detected as that harness."""

from __future__ import annotations

import pytest

from safeagents._registry import Registry, load_registry

OPENCODE = [
    "bash",
    "read",
    "glob",
    "grep",
    "edit",
    "write",
    "task",
    "webfetch",
    "todowrite",
    "skill",
]
HERMES = [
    *("terminal", "process", "read_file", "write_file", "patch", "search_files"),
    *("execute_code", "web_search", "web_extract", "browser_navigate", "browser_click"),
    *("todo", "memory", "clarify", "delegate_task", "session_search", "vision_analyze"),
    *("skills_list", "skill_view", "skill_manage"),
]
CLAUDE = [
    *("Task", "Bash", "Glob", "Grep", "LS", "ExitPlanMode", "Read", "Edit", "MultiEdit"),
    *("Write", "NotebookEdit", "WebFetch", "TodoWrite", "WebSearch", "BashOutput"),
    *("KillShell", "SlashCommand", "mcp__github__create_issue"),
]
OPENHANDS = [
    "execute_bash",
    "think",
    "finish",
    "browser",
    "execute_ipython_cell",
    "str_replace_editor",
    "web_read",
]


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry(entry_points=False)


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        (["read", "bash", "edit", "write"], "pi"),
        (["read", "grep", "find", "ls"], "pi"),
        (["read", "bash", "edit", "write", "grep", "find", "ls"], "pi"),
        (OPENCODE, "opencode"),
        ([*OPENCODE, "question", "websearch", "codesearch"], "opencode"),
        (
            ["bash", "read", "glob", "grep", "apply_patch", "task", "webfetch", "todowrite"],
            "opencode",
        ),
        (HERMES, "hermes"),
        (CLAUDE, "claude-code"),
        (["shell", "update_plan", "apply_patch", "view_image"], "codex"),
        (["shell_command", "update_plan", "apply_patch", "web_search", "view_image"], "codex"),
        (["exec_command", "write_stdin", "update_plan", "apply_patch", "view_image"], "codex"),
        (["bash"], "mini-swe-agent"),
        (["bash", "str_replace_editor", "submit"], "swe-agent"),
        (OPENHANDS, "swe-agent"),
        (["terminal", "file_editor", "task_tracker", "finish"], "swe-agent"),
        (["lookup_weather", "send_email"], "generic"),
        ([], "generic"),
    ],
)
def test_default_tool_lists(registry: Registry, tools: list[str], expected: str) -> None:
    assert registry.detect(tools).name == expected


def test_detection_ignores_order_and_duplicates(registry: Registry) -> None:
    assert registry.detect([*reversed(CLAUDE), "Bash"]).name == "claude-code"


def test_lone_bash_is_deterministic(registry: Registry) -> None:
    assert {load_registry(entry_points=False).detect({"bash"}).name for _ in range(3)} == {
        registry.detect(["bash"]).name
    }
