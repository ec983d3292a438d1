"""Shared building blocks of the built-in harness plugins.

A plugin is a :class:`ToolMapHarness`: a table from tool name to a handler that turns
the call's decoded arguments into effects with the analysers (shell, Python, patches) of
safeagents' public API, as a third-party plugin would.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlsplit

from safeagents import (
    AnalysisContext,
    Effect,
    Harness,
    ToolCall,
    analyze_python,
    analyze_shell,
    edit_effect,
    parse_patch,
    write_effect,
)
from safeagents.analysis import PythonTool

PATH_ALIASES = ("path", "file_path", "filePath", "notebook_path")
OLD_NEW_ALIASES = (
    ("oldText", "newText"),
    ("oldString", "newString"),
    ("old_string", "new_string"),
    ("old_str", "new_str"),
)
PATCH_ALIASES = ("patchText", "patch", "input")
WORKDIR_ALIASES = ("workdir", "working_directory")
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash"})
APPLY_PATCH_COMMANDS = frozenset({"apply_patch", "applypatch"})
OPAQUE_LIMIT = 2000


@dataclass(frozen=True, slots=True)
class ToolArgs:
    """A call's arguments, decoded; ``text`` holds string arguments that are not a JSON object."""

    mapping: Mapping[str, Any] = field(default_factory=dict)
    text: str | None = None

    @classmethod
    def of(cls, arguments: object) -> ToolArgs:
        if isinstance(arguments, Mapping):
            return cls(mapping=arguments)
        if isinstance(arguments, str):
            if not arguments.strip():
                return cls()
            decoded = _json_or_none(arguments)
            if isinstance(decoded, Mapping):
                return cls(mapping=decoded)
            return cls(text=decoded if isinstance(decoded, str) else arguments)
        return cls()

    def value(self, *names: str) -> Any:
        """The first present (non-``None``) argument among ``names``."""
        for name in names:
            value = self.mapping.get(name)
            if value is not None:
                return value
        return None

    def string(self, *names: str) -> str | None:
        """The first argument among ``names`` that is a string."""
        for name in names:
            value = self.mapping.get(name)
            if isinstance(value, str):
                return value
        return None

    def flag(self, *names: str) -> bool:
        value = self.value(*names)
        if isinstance(value, str):
            return value.strip().lower() in {"true", "1", "yes"}
        return value is True

    def items(self, *names: str) -> list[Any]:
        """A list argument, also when sent as a JSON string; anything else is ``[]``."""
        value = self.value(*names)
        if isinstance(value, str):
            value = _json_or_none(value)
        return list(value) if isinstance(value, list) else []

    def context(
        self, ctx: AnalysisContext, names: Iterable[str] = WORKDIR_ALIASES
    ) -> AnalysisContext:
        """``ctx`` moved into the call's working-directory argument, if it has one."""
        workdir = self.string(*names)
        return ctx.chdir(workdir) if workdir and workdir.strip() else ctx

    def raw(self) -> str:
        """The arguments as text, for opaque effects and messages."""
        if self.text is not None:
            return self.text
        try:
            return json.dumps(self.mapping, ensure_ascii=False, default=repr)
        except (TypeError, ValueError, RecursionError):
            return repr(self.mapping)


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


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def clip(text: str, limit: int = OPAQUE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def opaque_exec(text: str) -> Effect:
    """An ``exec`` that could not be resolved statically."""
    return Effect("exec", command=clip(text), opaque=True)


def no_effect(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """Handler of tools that touch nothing (plans, todos, sub-agent prompts)."""
    return []


def dedupe(effects: Iterable[Effect]) -> list[Effect]:
    return list(dict.fromkeys(effects))


def shell(script: str, ctx: AnalysisContext) -> list[Effect]:
    return list(analyze_shell(script, ctx)) if script.strip() else []


def python(
    code: str, ctx: AnalysisContext, tools: Mapping[str, PythonTool] | None = None
) -> list[Effect]:
    """Effects of a Python snippet; ``tools``: the harness' tool functions it may call."""
    return list(analyze_python(code, ctx, tools=tools or {})) if code.strip() else []


def patch(text: str, ctx: AnalysisContext) -> list[Effect]:
    return list(parse_patch(text, ctx)) if text.strip() else []


def edit(
    path: str, old: str, new: str, ctx: AnalysisContext, *, replace_all: bool = False
) -> Effect:
    return edit_effect(path, old, new, ctx, replace_all=replace_all)


def write(path: str, content: str, ctx: AnalysisContext, *, new_file: bool = False) -> Effect:
    return write_effect(path, content, ctx, new_file=new_file)


def insertion(path: str, text: str, ctx: AnalysisContext) -> Effect:
    """Text inserted into ``path`` without removing anything (the rest of the file is unknown)."""
    return Effect("write", path=ctx.resolve(path), added=text, removed="")


def unknown_write(path: str, ctx: AnalysisContext) -> Effect:
    """A write to ``path`` whose new content is not known."""
    return Effect("write", path=ctx.resolve(path))


def read(path: str, ctx: AnalysisContext) -> Effect:
    return Effect("read", path=ctx.resolve(path))


def search(pattern: str | None, path: str | None, ctx: AnalysisContext) -> Effect:
    """A content or file-name search under ``path`` (default: the working directory)."""
    return Effect("search", pattern=pattern, path=ctx.resolve(path or "."))


def listing(path: str | None, ctx: AnalysisContext) -> Effect:
    """A directory listing, modelled as a search without a pattern."""
    return Effect("search", path=ctx.resolve(path or "."))


def network(url: str) -> Effect:
    url = url.strip()
    try:
        host = urlsplit(url if "//" in url else "//" + url).hostname
    except ValueError:
        host = None
    return Effect("network", url=url, host=host)


def web_search(query: str | None) -> Effect:
    """A web search: a network effect whose ``pattern`` is the query (no URL is known)."""
    return Effect("network", pattern=query)


def argv_effects(argv: list[Any], ctx: AnalysisContext) -> list[Effect]:
    """Effects of running ``argv`` directly (no shell), seeing through ``bash -lc S``."""
    words = [word if isinstance(word, str) else str(word) for word in argv]
    if not words:
        return []
    program = posixpath.basename(words[0])
    if program in SHELLS and len(words) >= 3 and _is_command_flag(words[1]):
        return shell(words[2], ctx)
    if program in APPLY_PATCH_COMMANDS and len(words) == 2:
        return patch(words[1], ctx)
    return shell(shlex.join(words), ctx)


def _is_command_flag(word: str) -> bool:
    return word.startswith("-") and not word.startswith("--") and "c" in word[1:]


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


def edits_effects(path: str, edits: Iterable[Any], ctx: AnalysisContext) -> list[Effect]:
    """One edit effect per ``{old, new}`` entry of an edit list, in any alias spelling."""
    effects: list[Effect] = []
    for entry in edits:
        if not isinstance(entry, Mapping):
            continue
        entry_args = ToolArgs(mapping=entry)
        entry_path = entry_args.string(*PATH_ALIASES) or path
        effect = old_new_effect(entry_path, entry_args, ctx)
        if effect is not None:
            effects.append(effect)
    return effects


def old_new_effect(path: str, args: ToolArgs, ctx: AnalysisContext) -> Effect | None:
    """The edit described by the first old/new argument pair present in ``args``."""
    if not path:
        return None
    for old_name, new_name in OLD_NEW_ALIASES:
        old, new = args.value(old_name), args.value(new_name)
        if old is None and new is None:
            continue
        replace_all = args.flag("replaceAll", "replace_all")
        return edit(path, _text(old), _text(new), ctx, replace_all=replace_all)
    return None


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
