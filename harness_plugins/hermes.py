"""Hermes Agent (NousResearch): ``terminal``, file tools, ``patch`` and ``execute_code``."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import ClassVar

from harness_plugins._common import (
    Handler,
    ToolArgs,
    ToolMapHarness,
    edits_effects,
    fetch_tool,
    network,
    no_effect,
    patch,
    python_tool,
    read,
    read_tool,
    search_tool,
    shell,
    shell_tool,
    web_search_tool,
    write_tool,
)
from safeagents import AnalysisContext, Effect, Harness, ToolCall, hookimpl, rejection_script

__all__ = ["HermesHarness", "safeagents_harnesses"]


def _patch(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """``mode: replace`` (path, old_string, new_string) or ``mode: patch`` (V4A envelope)."""
    envelope = args.string("patch")
    if args.string("mode") == "patch" or (envelope and args.value("old_string") is None):
        return patch(envelope, ctx) if envelope else []
    path = args.string("path")
    return edits_effects(path, [args.mapping], ctx) if path and path.strip() else []


def _process(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """Only ``write``/``submit`` do something: they type ``data`` into a running process."""
    if args.string("action") not in {"write", "submit"}:
        return []
    data = args.string("data", "input")
    return shell(data, ctx) if data and data.strip() else []


def _vision(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    image = args.string("image_url", "url", "path")
    if not image or not image.strip():
        return []
    if image.startswith(("http://", "https://")):
        return [network(image)]
    return [read(image.removeprefix("file://"), ctx)]


def _browser(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    url = args.string("url")
    return [network(url)] if url and url.strip() else []


class HermesHarness(ToolMapHarness):
    name = "hermes"
    aliases = frozenset({"hermes-agent", "hermes_agent"})
    tools = frozenset(
        {
            "terminal",
            "process",
            "read_file",
            "write_file",
            "patch",
            "search_files",
            "execute_code",
            "web_search",
            "web_extract",
            "browser_navigate",
            "browser_snapshot",
            "browser_click",
            "browser_type",
            "delegate_task",
            "todo",
            "memory",
            "session_search",
            "clarify",
            "vision_analyze",
            "skills_list",
            "skill_view",
        }
    )
    handlers: ClassVar[Mapping[str, Handler]] = {
        "terminal": shell_tool("command"),
        "process": _process,
        "read_file": read_tool("path"),
        "write_file": write_tool(("path",), ("content",)),
        "patch": _patch,
        "search_files": search_tool(("pattern",), ("path",)),
        "execute_code": python_tool("code"),
        "web_search": web_search_tool("query"),
        "web_extract": fetch_tool("urls", "url"),
        "vision_analyze": _vision,
        **dict.fromkeys(
            (
                "delegate_task",
                "todo",
                "memory",
                "session_search",
                "clarify",
                "text_to_speech",
                "image_generate",
                "send_message",
                "cronjob",
            ),
            no_effect,
        ),
    }

    def handler(self, tool: str) -> Handler | None:
        if tool.startswith("browser_"):
            return _browser
        if tool.startswith(("skill_", "skills_")):
            return no_effect
        return super().handler(tool)

    def rewrite(
        self, call: ToolCall, message: str, *, offered: Collection[str] = ()
    ) -> ToolCall | None:
        """The ``terminal`` tool printing ``message`` to stderr and exiting 1."""
        return ToolCall(call.id, "terminal", {"command": rejection_script(message)})


@hookimpl
def safeagents_harnesses() -> list[Harness]:
    return [HermesHarness()]
