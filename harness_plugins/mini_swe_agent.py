"""mini-swe-agent: one ``bash`` tool, or its text mode: a reply's one fenced ``bash`` block.

A request offering only ``bash`` is detected as this harness (pi offers ``bash`` too,
but never alone); the call maps the same way under either. In text mode the harness runs the
reply's block when it holds exactly one (any other count is a format error that runs
nothing) and answers with the observation as a user message.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import ClassVar

from harness_plugins._common import Handler, ToolMapHarness, shell_tool
from safeagents import Harness, ToolCall, hookimpl, rejection_script

__all__ = ["MiniSweAgentHarness", "safeagents_harnesses"]

_ACTION = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
"""mini-swe-agent's own pattern for the action of a text-mode reply."""


class MiniSweAgentHarness(ToolMapHarness):
    name = "mini-swe-agent"
    aliases = frozenset({"mini", "mini_swe_agent"})
    tools = frozenset({"bash"})
    handlers: ClassVar[Mapping[str, Handler]] = {"bash": shell_tool("command")}

    def text_calls(self, text: str) -> list[ToolCall]:
        actions = _ACTION.findall(text)
        if len(actions) != 1:
            return []
        return [ToolCall("text-action", "bash", {"command": actions[0].strip()})]

    def rewrite(
        self, call: ToolCall, message: str, *, offered: Collection[str] = ()
    ) -> ToolCall | None:
        """The ``bash`` tool printing ``message`` to stderr and exiting 1."""
        return ToolCall(call.id, "bash", {"command": rejection_script(message)})


@hookimpl
def safeagents_harnesses() -> list[Harness]:
    return [MiniSweAgentHarness()]
