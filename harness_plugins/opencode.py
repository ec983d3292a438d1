"""opencode: lowercase tools with ``filePath`` arguments, ``batch`` unwrapped recursively."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import ClassVar

from harness_plugins._common import (
    Handler,
    ToolMapHarness,
    fetch_tool,
    listing_tool,
    no_effect,
    opaque_exec,
    patch_tool,
    read_tool,
    search_tool,
    shell_tool,
    web_search_tool,
    write_tool,
)
from safeagents import (
    AnalysisContext,
    Effect,
    GenericHarness,
    Harness,
    ToolCall,
    hookimpl,
    rejection_script,
)
from safeagents.toolkit import PATH_ALIASES, ToolArgs, edits_effects, write

__all__ = ["OpencodeHarness", "safeagents_harnesses"]

_MAX_BATCH_DEPTH = 4


def _edit(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """An edit; an empty ``oldString`` creates or overwrites the file with ``newString``."""
    path = args.string(*PATH_ALIASES)
    if not path or not path.strip():
        return []
    old = args.value("oldString", "old_string")
    if old == "":
        new = args.value("newString", "new_string")
        return [write(path, new if isinstance(new, str) else "", ctx)]
    return edits_effects(path, [args.mapping], ctx)


def _multiedit(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    path = args.string(*PATH_ALIASES) or ""
    effects: list[Effect] = []
    for entry in args.items("edits"):
        if isinstance(entry, Mapping):
            entry_path = ToolArgs(mapping=entry).string(*PATH_ALIASES) or path
            effects.extend(_edit(ToolArgs(mapping={**entry, "filePath": entry_path}), ctx))
    return effects


def _batch(args: ToolArgs, ctx: AnalysisContext, depth: int = 0) -> list[Effect]:
    """Effects of every ``{tool, parameters}`` entry of ``tool_calls``."""
    if depth >= _MAX_BATCH_DEPTH:
        return [opaque_exec(args.raw())]
    harness, fallback = OpencodeHarness(), GenericHarness()
    effects: list[Effect] = []
    for entry in args.items("tool_calls"):
        if not isinstance(entry, Mapping):
            continue
        tool = entry.get("tool") or entry.get("name")
        parameters = entry.get("parameters", entry.get("arguments", {}))
        if not isinstance(tool, str):
            continue
        if not isinstance(parameters, (Mapping, str)):
            parameters = {}
        if tool == "batch":
            effects.extend(_batch(ToolArgs.of(parameters), ctx, depth + 1))
            continue
        call = ToolCall(id="", name=tool, arguments=parameters)
        inner = harness.effects(call, ctx)
        effects.extend(inner if inner is not None else fallback.effects(call, ctx))
    return effects


def _batch_handler(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    return _batch(args, ctx)


class OpencodeHarness(ToolMapHarness):
    name = "opencode"
    tools = frozenset(
        {
            "bash",
            "read",
            "glob",
            "grep",
            "edit",
            "write",
            "task",
            "webfetch",
            "todowrite",
            "todoread",
            "websearch",
            "codesearch",
            "skill",
            "apply_patch",
            "question",
            "batch",
            "list",
            "multiedit",
            "patch",
            "lsp",
        }
    )
    handlers: ClassVar[Mapping[str, Handler]] = {
        "bash": shell_tool("command"),
        "shell": shell_tool("command"),
        "read": read_tool(*PATH_ALIASES),
        "edit": _edit,
        "multiedit": _multiedit,
        "write": write_tool(PATH_ALIASES, ("content",)),
        "apply_patch": patch_tool("patchText", "patch", "input"),
        "patch": patch_tool("patchText", "patch", "input"),
        "glob": search_tool(("pattern",), PATH_ALIASES),
        "grep": search_tool(("pattern",), PATH_ALIASES),
        "list": listing_tool(*PATH_ALIASES),
        "webfetch": fetch_tool("url"),
        "websearch": web_search_tool("query"),
        "codesearch": web_search_tool("query"),
        "batch": _batch_handler,
        **dict.fromkeys(
            (
                "task",
                "todowrite",
                "todoread",
                "skill",
                "question",
                "invalid",
                "lsp",
                "plan_enter",
                "plan_exit",
            ),
            no_effect,
        ),
    }

    def rewrite(
        self, call: ToolCall, message: str, *, offered: Collection[str] = ()
    ) -> ToolCall | None:
        """The ``bash`` tool printing ``message`` to stderr and exiting 1."""
        return ToolCall(
            call.id,
            "bash",
            {"command": rejection_script(message), "description": "safeagents: blocked call"},
        )


@hookimpl
def safeagents_harnesses() -> list[Harness]:
    return [OpencodeHarness()]
