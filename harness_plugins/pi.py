"""pi coding agent (``@mariozechner/pi-coding-agent``): lowercase tools, ``path`` arguments."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import ClassVar

from harness_plugins._common import (
    Handler,
    ToolMapHarness,
    listing_tool,
    read_tool,
    search_tool,
    shell_tool,
    write_tool,
)
from safeagents import AnalysisContext, Effect, Harness, ToolCall, hookimpl, rejection_script
from safeagents.toolkit import ToolArgs, edits_effects, old_new_effect

__all__ = ["PiHarness", "safeagents_harnesses"]

_PATH = ("path", "file_path")


def _edit(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """``edits: [{oldText, newText}]`` (also as a JSON string) or the legacy flat pair."""
    path = args.string(*_PATH)
    if not path or not path.strip():
        return []
    edits = args.items("edits")
    if edits:
        return edits_effects(path, edits, ctx)
    effect = old_new_effect(path, args, ctx)
    return [effect] if effect is not None else []


class PiHarness(ToolMapHarness):
    name = "pi"
    aliases = frozenset({"pi-coding-agent"})
    tools = frozenset({"bash", "read", "edit", "write", "grep", "find", "ls"})
    handlers: ClassVar[Mapping[str, Handler]] = {
        "bash": shell_tool("command"),
        "read": read_tool(*_PATH),
        "edit": _edit,
        "write": write_tool(_PATH, ("content",)),
        "grep": search_tool(("pattern",), _PATH),
        "find": search_tool(("pattern",), _PATH),
        "ls": listing_tool(*_PATH),
    }

    def rewrite(
        self, call: ToolCall, message: str, *, offered: Collection[str] = ()
    ) -> ToolCall | None:
        """The ``bash`` tool printing ``message`` to stderr and exiting 1."""
        return ToolCall(call.id, "bash", {"command": rejection_script(message)})


@hookimpl
def safeagents_harnesses() -> list[Harness]:
    return [PiHarness()]
