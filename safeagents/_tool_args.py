"""A tool call's decoded arguments and the effects of the argument shapes every harness shares.

The generic harness reads calls with these; harness plugins get them from
:mod:`safeagents.toolkit`.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from safeagents._actions import AnalysisContext, Effect, decode_arguments
from safeagents.analysis import (
    PythonTool,
    analyze_python,
    analyze_shell,
    edit_effect,
    parse_patch,
    write_effect,
)

__all__ = [
    "OLD_NEW_ALIASES",
    "PATH_ALIASES",
    "WORKDIR_ALIASES",
    "ToolArgs",
    "argv_effects",
    "dedupe",
    "edit",
    "editor_effects",
    "edits_effects",
    "insertion",
    "listing",
    "network",
    "old_new_effect",
    "patch",
    "python",
    "read",
    "search",
    "shell",
    "unknown_write",
    "web_search",
    "write",
]

PATH_ALIASES = ("path", "file_path", "filePath", "notebook_path")
OLD_NEW_ALIASES = (
    ("oldText", "newText"),
    ("oldString", "newString"),
    ("old_string", "new_string"),
    ("old_str", "new_str"),
)
WORKDIR_ALIASES = ("workdir", "working_directory")
_EDITOR_PATH = ("path", "file_path")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash"})
_APPLY_PATCH_COMMANDS = frozenset({"apply_patch", "applypatch"})


@dataclass(frozen=True, slots=True)
class ToolArgs:
    """A call's arguments, decoded; ``text`` holds string arguments that are not a JSON object."""

    mapping: Mapping[str, Any] = field(default_factory=dict)
    text: str | None = None

    @classmethod
    def of(cls, arguments: object) -> ToolArgs:
        """Decode a call's arguments: a mapping, a JSON object string, or other text."""
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
        """Whether the first present argument among ``names`` is true (or ``"true"``, ``"1"``…)."""
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


def _json_or_none(text: str) -> Any:
    if not text.strip():
        return None
    decoded = decode_arguments(text)
    return None if decoded is text else decoded


def dedupe(effects: Iterable[Effect]) -> list[Effect]:
    """``effects`` without repeats, in first-seen order."""
    return list(dict.fromkeys(effects))


def shell(script: str, ctx: AnalysisContext) -> list[Effect]:
    """Effects of a shell script; a blank script has none."""
    return list(analyze_shell(script, ctx)) if script.strip() else []


def python(
    code: str, ctx: AnalysisContext, tools: Mapping[str, PythonTool] | None = None
) -> list[Effect]:
    """Effects of a Python snippet; ``tools``: the harness' tool functions it may call."""
    return list(analyze_python(code, ctx, tools=tools or {})) if code.strip() else []


def patch(text: str, ctx: AnalysisContext) -> list[Effect]:
    """Effects of an apply_patch envelope or unified diff; blank text has none."""
    return list(parse_patch(text, ctx)) if text.strip() else []


def edit(
    path: str, old: str, new: str, ctx: AnalysisContext, *, replace_all: bool = False
) -> Effect:
    """An in-place edit of ``path`` replacing ``old`` with ``new``."""
    return edit_effect(path, old, new, ctx, replace_all=replace_all)


def write(path: str, content: str, ctx: AnalysisContext, *, new_file: bool = False) -> Effect:
    """A write of ``content`` to ``path`` (``new_file``: the call creates it)."""
    return write_effect(path, content, ctx, new_file=new_file)


def insertion(path: str, text: str, ctx: AnalysisContext) -> Effect:
    """Text inserted into ``path`` without removing anything (the rest of the file is unknown)."""
    return Effect("write", path=ctx.resolve(path), added=text, removed="")


def unknown_write(path: str, ctx: AnalysisContext) -> Effect:
    """A write to ``path`` whose new content is not known."""
    return Effect("write", path=ctx.resolve(path))


def read(path: str, ctx: AnalysisContext) -> Effect:
    """A read of ``path``."""
    return Effect("read", path=ctx.resolve(path))


def search(pattern: str | None, path: str | None, ctx: AnalysisContext) -> Effect:
    """A content or file-name search under ``path`` (default: the working directory)."""
    return Effect("search", pattern=pattern, path=ctx.resolve(path or "."))


def listing(path: str | None, ctx: AnalysisContext) -> Effect:
    """A directory listing, modelled as a search without a pattern."""
    return Effect("search", path=ctx.resolve(path or "."))


def network(url: str) -> Effect:
    """A network access to ``url``, with its host."""
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
    if program in _SHELLS and len(words) >= 3 and _is_command_flag(words[1]):
        return shell(words[2], ctx)
    if program in _APPLY_PATCH_COMMANDS and len(words) == 2:
        return patch(words[1], ctx)
    return shell(shlex.join(words), ctx)


def _is_command_flag(word: str) -> bool:
    return word.startswith("-") and not word.startswith("--") and "c" in word[1:]


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


def editor_effects(command: str, args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """``str_replace_editor``/``file_editor``: view, create, str_replace, insert, undo_edit."""
    path = args.string(*_EDITOR_PATH)
    if not path or not path.strip():
        return []
    if command == "view":
        return [read(path, ctx)]
    if command == "create":
        content = args.value("file_text", "content")
        return [write(path, content if isinstance(content, str) else "", ctx, new_file=True)]
    if command == "str_replace":
        old, new = args.value("old_str"), args.value("new_str")
        return [edit(path, _editor_text(old), _editor_text(new), ctx)]
    if command == "insert":
        return [insertion(path, _editor_text(args.value("new_str", "text")), ctx)]
    return [unknown_write(path, ctx)] if command == "undo_edit" else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _editor_text(value: object) -> str:
    return value if isinstance(value, str) else ""
