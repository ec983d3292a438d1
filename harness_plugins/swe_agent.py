"""SWE-agent and OpenHands: ``bash``/``execute_bash``, ``str_replace_editor`` and IPython cells."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from harness_plugins._common import (
    Handler,
    ToolMapHarness,
    fetch_tool,
    no_effect,
    read_tool,
    search_tool,
    shell_tool,
)
from safeagents import AnalysisContext, Effect, Harness, hookimpl
from safeagents.toolkit import ToolArgs, dedupe, editor_effects, network, python, shell, write

__all__ = ["SweAgentHarness", "ipython_effects", "safeagents_harnesses"]

_SHELL_ESCAPE = re.compile(r"^\s*(?:[\w\s,]+=\s*)?!(?!=)(.*)$")
_CELL_SHELL_MAGIC = re.compile(r"^\s*%%(?:bash|sh|script\s+(?:ba)?sh)\b[^\n]*\n?")
_URL = re.compile(r"""https?://[^\s'"`)>\]]+""")


def _editor(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    command = args.string("command")
    return editor_effects(command, args, ctx) if command else []


def ipython_effects(code: str, ctx: AnalysisContext) -> list[Effect]:
    """An IPython cell: ``%%bash`` cells and ``!cmd`` lines are shell, the rest Python."""
    magic = _CELL_SHELL_MAGIC.match(code)
    if magic:
        return shell(code[magic.end() :], ctx)
    effects: list[Effect] = []
    python_lines: list[str] = []
    for line in code.splitlines():
        escape = _SHELL_ESCAPE.match(line)
        if escape and not line.lstrip().startswith("#"):
            effects.extend(shell(escape.group(1), ctx))
            python_lines.append("")
        elif line.lstrip().startswith("%"):
            python_lines.append("")
        else:
            python_lines.append(line)
    return dedupe([*python("\n".join(python_lines), ctx), *effects])


def _ipython(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    code = args.string("code")
    return ipython_effects(code, ctx) if code is not None else []


def _browser(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """OpenHands ``browser``: BrowserGym code such as ``goto("https://…")``."""
    code = args.string("code") or ""
    return dedupe(network(url) for url in _URL.findall(code))


def _create(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    path = args.string("filename", "path")
    return [write(path, "", ctx, new_file=True)] if path and path.strip() else []


class SweAgentHarness(ToolMapHarness):
    name = "swe-agent"
    aliases = frozenset({"openhands", "swe_agent", "sweagent"})
    tools = frozenset(
        {
            "bash",
            "str_replace_editor",
            "submit",
            "execute_bash",
            "execute_ipython_cell",
            "browser",
            "web_read",
            "fetch",
            "think",
            "finish",
            "task_tracker",
            "terminal",
            "file_editor",
        }
    )
    handlers: ClassVar[Mapping[str, Handler]] = {
        "bash": shell_tool("command"),
        "execute_bash": shell_tool("command"),
        "terminal": shell_tool("command"),
        "str_replace_editor": _editor,
        "file_editor": _editor,
        "execute_ipython_cell": _ipython,
        "browser": _browser,
        "fetch": fetch_tool("url"),
        "web_read": fetch_tool("url"),
        "open": read_tool("path", "file_path"),
        "filemap": read_tool("file_path", "path"),
        "create": _create,
        "find_file": search_tool(("file_name",), ("dir",)),
        "search_dir": search_tool(("search_term",), ("dir",)),
        "search_file": search_tool(("search_term",), ("file",)),
        **dict.fromkeys(("think", "finish", "submit", "task_tracker"), no_effect),
    }


@hookimpl
def safeagents_harnesses() -> list[Harness]:
    return [SweAgentHarness()]
