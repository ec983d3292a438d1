"""Claude Code: capitalised tools (``Bash``, ``Read``, ``Edit`` …) with ``file_path`` arguments."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import ClassVar

from harness_plugins._common import (
    Handler,
    ToolMapHarness,
    fetch_tool,
    listing_tool,
    no_effect,
    read_tool,
    search_tool,
    shell_tool,
    web_search_tool,
    write_tool,
)
from safeagents import AnalysisContext, Effect, Harness, ToolCall, hookimpl, rejection_script
from safeagents.toolkit import ToolArgs, edits_effects, insertion

__all__ = ["ClaudeCodeHarness", "safeagents_harnesses"]

_PATH = ("file_path", "path")


def _edit(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    path = args.string(*_PATH)
    return edits_effects(path, [args.mapping], ctx) if path and path.strip() else []


def _multi_edit(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    path = args.string(*_PATH)
    return edits_effects(path, args.items("edits"), ctx) if path and path.strip() else []


def _notebook_edit(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """A cell replaced, inserted or deleted: an edit that adds ``new_source``."""
    path = args.string("notebook_path", *_PATH)
    if not path or not path.strip():
        return []
    source = args.string("new_source") or ""
    return [insertion(path, source, ctx)]


_NO_EFFECT_TOOLS = (
    "Agent",
    "Task",
    "TodoWrite",
    "TodoRead",
    "BashOutput",
    "KillShell",
    "KillBash",
    "TaskOutput",
    "TaskStop",
    "TaskCreate",
    "TaskUpdate",
    "TaskList",
    "TaskGet",
    "Skill",
    "SlashCommand",
    "AskUserQuestion",
    "ExitPlanMode",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitWorktree",
    "CronCreate",
    "CronDelete",
    "CronList",
    "LSP",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
)


class ClaudeCodeHarness(ToolMapHarness):
    name = "claude-code"
    aliases = frozenset({"claude", "claude_code"})
    tools = frozenset(
        {
            "Agent",
            "Task",
            "Bash",
            "BashOutput",
            "KillShell",
            "Glob",
            "Grep",
            "LS",
            "ExitPlanMode",
            "Read",
            "Edit",
            "MultiEdit",
            "Write",
            "NotebookEdit",
            "WebFetch",
            "TodoWrite",
            "WebSearch",
            "Skill",
            "SlashCommand",
            "AskUserQuestion",
        }
    )
    handlers: ClassVar[Mapping[str, Handler]] = {
        "Bash": shell_tool("command"),
        "Read": read_tool(*_PATH),
        "Write": write_tool(_PATH, ("content",)),
        "Edit": _edit,
        "MultiEdit": _multi_edit,
        "NotebookEdit": _notebook_edit,
        "Glob": search_tool(("pattern",), ("path",)),
        "Grep": search_tool(("pattern",), ("path",)),
        "LS": listing_tool("path"),
        "WebFetch": fetch_tool("url"),
        "WebSearch": web_search_tool("query"),
        **dict.fromkeys(_NO_EFFECT_TOOLS, no_effect),
    }

    def rewrite(
        self, call: ToolCall, message: str, *, offered: Collection[str] = ()
    ) -> ToolCall | None:
        """The ``Bash`` tool printing ``message`` to stderr and exiting 1."""
        return ToolCall(
            call.id,
            "Bash",
            {"command": rejection_script(message), "description": "safeagents: blocked call"},
        )


@hookimpl
def safeagents_harnesses() -> list[Harness]:
    return [ClaudeCodeHarness()]
