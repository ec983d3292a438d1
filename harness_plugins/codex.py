"""OpenAI Codex CLI: every shell-tool variant, and apply_patch as JSON, freeform text or argv."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, ClassVar

from harness_plugins._common import (
    Handler,
    ToolMapHarness,
    command_effects,
    no_effect,
    patch_tool,
    read_tool,
    shell_tool,
    web_search_tool,
)
from safeagents import AnalysisContext, Effect, Harness, ToolCall, hookimpl, rejection_script
from safeagents.toolkit import ToolArgs, shell

__all__ = ["CodexHarness", "safeagents_harnesses"]


def _local_shell(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """``local_shell_call``: ``action: {command: [...], working_directory}``."""
    action = args.value("action")
    action_args = ToolArgs(mapping=action) if isinstance(action, Mapping) else args
    return command_effects(action_args, action_args.context(ctx), "command")


def _write_stdin(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """Characters typed into a running session, read as shell input (it is usually a shell)."""
    chars = args.string("chars", "input")
    return shell(chars, ctx) if chars and chars.strip() else []


_SHELL_ARGUMENTS: dict[str, Callable[[str], dict[str, Any]]] = {
    "shell_command": lambda script: {"command": script},
    "exec_command": lambda script: {"cmd": script},
    "shell": lambda script: {"command": ["bash", "-lc", script]},
    "local_shell": lambda script: {"type": "exec", "command": ["bash", "-lc", script]},
}
"""Codex's shell tools, in order of preference, and how each takes a script."""


class CodexHarness(ToolMapHarness):
    name = "codex"
    aliases = frozenset({"codex-cli", "openai-codex"})
    tools = frozenset(
        {
            "shell",
            "shell_command",
            "exec_command",
            "write_stdin",
            "local_shell",
            "apply_patch",
            "update_plan",
            "view_image",
            "web_search",
            "spawn_agent",
            "send_input",
            "wait",
        }
    )
    handlers: ClassVar[Mapping[str, Handler]] = {
        "shell": shell_tool("command"),
        "container.exec": shell_tool("command"),
        "shell_command": shell_tool("command"),
        "exec_command": shell_tool("cmd", "command"),
        "write_stdin": _write_stdin,
        "local_shell": _local_shell,
        "local_shell_call": _local_shell,
        "apply_patch": patch_tool("input", "patch", "patchText"),
        "view_image": read_tool("path"),
        "web_search": web_search_tool("query"),
        **dict.fromkeys(
            ("update_plan", "spawn_agent", "send_input", "wait", "close_agent"), no_effect
        ),
    }

    def rewrite(
        self, call: ToolCall, message: str, *, offered: Collection[str] = ()
    ) -> ToolCall | None:
        """The shell tool codex offers (the blocked call's own, if a shell) failing with
        ``message``; ``None`` if the request offers none."""
        script = rejection_script(message)
        candidates = [call.name] if call.name in _SHELL_ARGUMENTS else []
        candidates += [name for name in _SHELL_ARGUMENTS if name in offered]
        if not candidates:
            return None
        name = candidates[0]
        return ToolCall(call.id, name, _SHELL_ARGUMENTS[name](script))


@hookimpl
def safeagents_harnesses() -> list[Harness]:
    return [CodexHarness()]
