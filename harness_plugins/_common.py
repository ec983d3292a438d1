"""Shared building blocks of the built-in harness plugins.

A plugin is a :class:`ToolMapHarness`: a table from tool name to a handler that turns
the call's decoded arguments into effects with :mod:`safeagents.toolkit` and the analysers
(shell, Python, patches) of safeagents' public API, as a third-party plugin would.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, ClassVar

from safeagents import AnalysisContext, Effect, Harness, ToolCall
from safeagents.analysis import PythonTool
from safeagents.toolkit import (
    WORKDIR_ALIASES,
    ToolArgs,
    argv_effects,
    listing,
    network,
    patch,
    python,
    read,
    search,
    shell,
    unknown_write,
    web_search,
    write,
)

PATCH_ALIASES = ("patchText", "patch", "input")
OPAQUE_LIMIT = 2000


Handler = Callable[[ToolArgs, AnalysisContext], list[Effect]]


class ToolMapHarness(Harness):
    """A harness defined by a table of tool handlers; unknown tools give ``None``."""

    handlers: ClassVar[Mapping[str, Handler]] = {}
    workdir_arguments: ClassVar[tuple[str, ...]] = WORKDIR_ALIASES

    def handler(self, tool: str) -> Handler | None:
        return self.handlers.get(tool)

    def effects(self, call: ToolCall, ctx: AnalysisContext) -> list[Effect] | None:
        handler = self.handler(call.name)
        if handler is None:
            return None
        args = ToolArgs.of(call.arguments)
        return handler(args, args.context(ctx, self.workdir_arguments))

    def knows(self, tool: str) -> bool:
        return tool in self.tools or self.handler(tool) is not None

    def detect(self, tool_names: Collection[str]) -> float:
        """Share of the offered tools this harness knows, plus a little for covering its own.

        Knowing every offered tool matters most; among harnesses that do, the one whose
        default tool set is covered best wins (so a lone ``bash`` is mini-swe-agent).
        """
        offered = {name for name in tool_names if isinstance(name, str)}
        if not self.tools or not offered:
            return 0.0
        known = sum(1 for name in offered if self.knows(name))
        covered = len(self.tools & offered)
        return 0.8 * known / len(offered) + 0.2 * covered / len(self.tools)


def clip(text: str, limit: int = OPAQUE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def opaque_exec(text: str) -> Effect:
    """An ``exec`` that could not be resolved statically."""
    return Effect("exec", command=clip(text), opaque=True)


def no_effect(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """Handler of tools that touch nothing (plans, todos, sub-agent prompts)."""
    return []


def command_effects(args: ToolArgs, ctx: AnalysisContext, *names: str) -> list[Effect]:
    """A shell command given as a script string or as an argv list."""
    value = args.value(*names)
    if isinstance(value, str):
        return shell(value, ctx)
    if isinstance(value, list):
        return argv_effects(value, ctx)
    if value is None and args.text is not None:
        return [opaque_exec(args.text)]
    return [opaque_exec(args.raw())] if value is not None else []


def patch_text(args: ToolArgs, *names: str) -> str | None:
    """Patch text from the first of ``names``, or the raw string arguments."""
    value = args.string(*(names or PATCH_ALIASES))
    if value is not None:
        return value
    return args.text


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


# Handler factories for the tool shapes every harness shares.


def shell_tool(*names: str) -> Handler:
    def handle(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
        return command_effects(args, ctx, *names)

    return handle


def python_tool(*names: str, tools: Mapping[str, PythonTool] | None = None) -> Handler:
    def handle(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
        code = args.string(*names)
        if code is None:
            return [opaque_exec(args.text)] if args.text is not None else []
        return python(code, ctx, tools)

    return handle


def read_tool(*names: str) -> Handler:
    def handle(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
        path = args.string(*names)
        return [read(path, ctx)] if path and path.strip() else []

    return handle


def write_tool(path_names: tuple[str, ...], content_names: tuple[str, ...]) -> Handler:
    def handle(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
        path = args.string(*path_names)
        if not path or not path.strip():
            return []
        content = args.value(*content_names)
        if content is None:
            return [unknown_write(path, ctx)]
        return [write(path, _text(content), ctx)]

    return handle


def search_tool(pattern_names: tuple[str, ...], path_names: tuple[str, ...]) -> Handler:
    def handle(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
        pattern = args.value(*pattern_names)
        path = args.string(*path_names)
        return [search(None if pattern is None else _text(pattern), path, ctx)]

    return handle


def listing_tool(*names: str) -> Handler:
    def handle(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
        return [listing(args.string(*names), ctx)]

    return handle


def fetch_tool(*names: str) -> Handler:
    """A fetch of one URL or a list of URLs."""

    def handle(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
        value = args.value(*names)
        urls = value if isinstance(value, list) else [value]
        return [network(url) for url in urls if isinstance(url, str) and url.strip()]

    return handle


def web_search_tool(*names: str) -> Handler:
    def handle(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
        query = args.value(*names)
        return [web_search(None if query is None else _text(query))]

    return handle


def patch_tool(*names: str) -> Handler:
    def handle(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
        text = patch_text(args, *names)
        return patch(text, ctx) if text is not None else []

    return handle
