"""mini-swe-agent: one ``bash`` tool; its text mode (fenced blocks) has no tool calls.

A request offering only ``bash`` is detected as this harness (pi offers ``bash`` too,
but never alone); the call maps the same way under either.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import ClassVar

from harness_plugins._common import Handler, ToolMapHarness, shell_tool
from safeagents import Harness, ToolCall, hookimpl, rejection_script

__all__ = ["MiniSweAgentHarness", "safeagents_harnesses"]


class MiniSweAgentHarness(ToolMapHarness):
    name = "mini-swe-agent"
    aliases = frozenset({"mini", "mini_swe_agent"})
    tools = frozenset({"bash"})
    handlers: ClassVar[Mapping[str, Handler]] = {"bash": shell_tool("command")}

    def rewrite(
        self, call: ToolCall, message: str, *, offered: Collection[str] = ()
    ) -> ToolCall | None:
        """The ``bash`` tool printing ``message`` to stderr and exiting 1."""
        return ToolCall(call.id, "bash", {"command": rejection_script(message)})


@hookimpl
def safeagents_harnesses() -> list[Harness]:
    return [MiniSweAgentHarness()]
