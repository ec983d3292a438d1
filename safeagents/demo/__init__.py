"""``safeagents demo``: a newcomer's first minute with the proxy.

It starts the scripted model and ``safeagents serve`` in front of it on free loopback ports,
runs one short agent session through the proxy (a real harness from ``.harnesses/`` when one
is installed, else a built-in agent loop that speaks pi's tool schema), prints every tool
call live as allowed or blocked, and leaves the transcript in a store for
``safeagents sessions show``.
"""

from __future__ import annotations

from safeagents.demo._agent import PI_TOOLS, AgentRun, run_builtin_agent
from safeagents.demo._project import PROMPT, SCRIPT, WorkspaceCheck, check_workspace, make_project
from safeagents.demo._run import (
    AUTO_HARNESSES,
    BUILTIN,
    DemoError,
    DemoOptions,
    DemoResult,
    choose_agent,
    run_demo,
    safeagents_command,
)
from safeagents.demo._view import LiveView

__all__ = [
    "AUTO_HARNESSES",
    "BUILTIN",
    "PI_TOOLS",
    "PROMPT",
    "SCRIPT",
    "AgentRun",
    "DemoError",
    "DemoOptions",
    "DemoResult",
    "LiveView",
    "WorkspaceCheck",
    "check_workspace",
    "choose_agent",
    "make_project",
    "run_builtin_agent",
    "run_demo",
    "safeagents_command",
]
