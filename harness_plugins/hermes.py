"""Hermes Agent (NousResearch): ``terminal``, file tools, ``patch`` and ``execute_code``."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import ClassVar

from harness_plugins._common import (
    Handler,
    ToolMapHarness,
    fetch_tool,
    no_effect,
    python_tool,
    read_tool,
    search_tool,
    shell_tool,
    web_search_tool,
    write_tool,
)
from safeagents import AnalysisContext, Effect, Harness, ToolCall, hookimpl, rejection_script
from safeagents.analysis import (
    PythonCall,
    PythonTool,
    analyze_shell,
    edit_effect,
    parse_patch,
    write_effect,
)
from safeagents.toolkit import ToolArgs, edits_effects, network, patch, read, shell

__all__ = ["EXECUTE_CODE_TOOLS", "HERMES_TOOLS", "HermesHarness", "safeagents_harnesses"]

HERMES_TOOLS = frozenset({"terminal", "write_file", "read_file", "patch", "search_files"})
"""Functions of ``hermes_tools`` that hermes ``execute_code`` snippets may call."""


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


def _code_terminal(call: PythonCall) -> list[Effect]:
    ctx = call.ctx
    workdir = call.text(None, "workdir")
    ctx = ctx.chdir(workdir) if workdir else ctx
    scripts = call.texts(0, "command")
    if scripts is None:
        return [call.opaque()]
    return [effect for script in scripts for effect in analyze_shell(script, ctx)]


def _code_paths(call: PythonCall) -> list[str] | None:
    found = call.texts(0, "path")
    return None if found is None else [call.ctx.resolve(path) for path in found]


def _code_read_file(call: PythonCall) -> list[Effect]:
    paths = _code_paths(call)
    if paths is None:
        return [call.opaque()]
    return [Effect("read", path=path) for path in paths]


def _code_write_file(call: PythonCall) -> list[Effect]:
    paths = _code_paths(call)
    if paths is None:
        return [call.opaque()]
    content = call.text(1, "content")
    if content is None:
        return [Effect("write", path=path) for path in paths]
    return [write_effect(path, content, call.ctx) for path in paths]


def _code_patch(call: PythonCall) -> list[Effect]:
    mode = call.text(4, "mode") or "replace"
    if mode == "patch":
        text = call.text(5, "patch")
        return [call.opaque()] if text is None else list(parse_patch(text, call.ctx))
    old = call.text(1, "old_string")
    new = call.text(2, "new_string")
    paths = _code_paths(call)
    if paths is None:
        return [call.opaque()]
    if old is None or new is None:
        return [Effect("write", path=path) for path in paths]
    return [edit_effect(path, old, new, call.ctx) for path in paths]


def _code_search_files(call: PythonCall) -> list[Effect]:
    pattern = call.text(0, "pattern")
    path = call.text(2, "path") or "."
    return [Effect("search", pattern=pattern, path=call.ctx.resolve(path))]


def _code_unknown(call: PythonCall) -> list[Effect]:
    return []


_CODE_TOOLS: Mapping[str, PythonTool] = {
    "terminal": _code_terminal,
    "read_file": _code_read_file,
    "write_file": _code_write_file,
    "patch": _code_patch,
    "search_files": _code_search_files,
}


class _ExecuteCodeTools(Mapping[str, PythonTool]):
    """The ``hermes_tools`` functions, called bare (``from hermes_tools import *``) or by module.

    Any other ``hermes_tools.*`` name is a tool call too, one without effects.
    """

    def __getitem__(self, name: str) -> PythonTool:
        if name in HERMES_TOOLS or name.startswith("hermes_tools."):
            return _CODE_TOOLS.get(name.rsplit(".", 1)[-1], _code_unknown)
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        yield from sorted(HERMES_TOOLS)
        yield from (f"hermes_tools.{name}" for name in sorted(HERMES_TOOLS))

    def __len__(self) -> int:
        return 2 * len(HERMES_TOOLS)


EXECUTE_CODE_TOOLS: Mapping[str, PythonTool] = _ExecuteCodeTools()
"""What calls of the ``hermes_tools`` API in ``execute_code`` snippets do."""


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
        "execute_code": python_tool("code", tools=EXECUTE_CODE_TOOLS),
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
