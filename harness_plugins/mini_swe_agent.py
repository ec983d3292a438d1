"""mini-swe-agent: one ``bash`` tool, or its text mode: a reply's one fenced action.

A request offering only ``bash`` is detected as this harness (pi offers ``bash`` too,
but never alone); the call maps the same way under either. In text mode the harness runs the
reply's action when it holds exactly one (any other count is a format error that runs
nothing) and answers with the observation as a user message. Version 1 fences the action as
```` ```bash ````; version 2's text-based configs as ```` ```mswea_bash_command ```` or
``<mswea_bash_command>`` tags. Each is read apart, as the version that uses it would: a
reply may hold an action for each.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Mapping
from typing import ClassVar

from harness_plugins._common import Handler, ToolMapHarness, shell_tool
from safeagents import Harness, ToolCall, hookimpl, rejection_script

__all__ = ["MiniSweAgentHarness", "safeagents_harnesses"]

_ACTIONS = (
    re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL),
    re.compile(r"```mswea_bash_command\s*\n(.*?)\n```", re.DOTALL),
    re.compile(r"<mswea_bash_command>(.*?)</mswea_bash_command>", re.DOTALL),
)
"""mini-swe-agent's own patterns for the action of a text-mode reply (1.x, then 2.x's)."""
_FENCES = (
    "```bash\n{}\n```",
    "```mswea_bash_command\n{}\n```",
    "<mswea_bash_command>{}</mswea_bash_command>",
)
_SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""The first line of an output that ends the run (2.x also wants the exit status 0)."""


class MiniSweAgentHarness(ToolMapHarness):
    name = "mini-swe-agent"
    aliases = frozenset({"mini", "mini_swe_agent"})
    tools = frozenset({"bash"})
    text_mode = True
    handlers: ClassVar[Mapping[str, Handler]] = {"bash": shell_tool("command")}

    def text_calls(self, text: str) -> list[ToolCall]:
        commands = [
            found[0].strip() for found in (p.findall(text) for p in _ACTIONS) if len(found) == 1
        ]
        return [
            ToolCall("text-action", "bash", {"command": command})
            for command in dict.fromkeys(commands)
        ]

    def rewrite(
        self, call: ToolCall, message: str, *, offered: Collection[str] = ()
    ) -> ToolCall | None:
        """The ``bash`` tool printing ``message`` to stderr and exiting 1."""
        return ToolCall(call.id, "bash", {"command": rejection_script(message)})

    def text_rewrite(self, text: str, message: str) -> str | None:
        """``text`` with each action it holds running ``rejection_script(message)`` instead."""
        script = rejection_script(_inert(message))
        rewritten = text
        for pattern in _ACTIONS:
            found = list(pattern.finditer(rewritten))
            if len(found) == 1:
                start, end = found[0].span(1)
                rewritten = rewritten[:start] + script + rewritten[end:]
        calls = self.text_calls(rewritten)
        # a replacement may uncover an unchecked action of a pattern passed over already
        if not calls or any(call.argument("command") != script for call in calls):
            return None
        return rewritten

    def text_stop(self, message: str) -> str | None:
        """The action printing the submission marker and ``message``, in every version's form."""
        script = f"printf '%s\\n' {_SUBMIT} {shlex.quote(_inert(message))}"
        return "safeagents ended this run.\n\n" + "\n\n".join(f.format(script) for f in _FENCES)


def _inert(message: str) -> str:
    """``message`` unable to open or close an action when it is written into a reply."""
    return message.replace("```", "'''").replace("mswea_bash_command", "mswea-bash-command")


@hookimpl
def safeagents_harnesses() -> list[Harness]:
    return [MiniSweAgentHarness()]
