"""The fallback harness: recognises a call by its argument names, whatever the tool is called.

The registry registers it as a built-in plugin and falls back to it for calls no other
harness knows.
"""

from __future__ import annotations

import re

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._harness import Harness
from safeagents._tool_args import (
    OLD_NEW_ALIASES,
    PATH_ALIASES,
    ToolArgs,
    argv_effects,
    dedupe,
    edit,
    editor_effects,
    edits_effects,
    listing,
    network,
    old_new_effect,
    patch,
    python,
    read,
    search,
    shell,
    web_search,
    write,
)
from safeagents.plugins import hookimpl

__all__ = ["GenericHarness", "safeagents_harnesses"]

_PATHS = (*PATH_ALIASES, "filename", "file")
_CONTENT = ("content", "file_text", "new_source", "initial_content")
_PATCHES = ("patchText", "patch", "input", "diff")
_WORKDIRS = ("workdir", "working_directory", "cwd")
_EDITOR_COMMANDS = frozenset({"view", "create", "str_replace", "insert", "undo_edit"})
_UNIFIED_DIFF = re.compile(r"^(?:--- \S.*\n\+\+\+ \S|diff --git )", re.MULTILINE)
_READ_NAME = re.compile(r"read|view|cat|open|show|expand|get_?file|fetch_?file", re.IGNORECASE)
"""Also Rovo Dev's ``expand_code_chunks`` and ``open_files`` (which takes ``file_paths``)."""
_SEARCH_NAME = re.compile(r"grep|search|find|glob", re.IGNORECASE)
_LIST_NAME = re.compile(r"(?:^|_)(?:ls|list)(?:_?(?:dir|directory|files))?$", re.IGNORECASE)
_DELETE_NAME = re.compile(
    r"^(?:delete|remove|rm|unlink|trash)(?:_?(?:files?|paths?|dir|directory))?$", re.IGNORECASE
)
_PYTHON_NAME = re.compile(r"python|ipython|execute_code|run_code", re.IGNORECASE)
_WEB_NAME = re.compile(r"web|internet|google|bing|brave|tavily|duckduckgo", re.IGNORECASE)
_TEST_FILE = re.compile(
    r"(?:^|/)(?:tests?|__tests__|spec)/|(?:^|/)test_[^/]*$|[._-](?:test|spec)\.\w+$|Tests?\.\w+$"
)
"""Test files, which a ``find``/``replace`` edit (Rovo Dev's ``find_and_replace_code``) leaves
unseen: the test updates of that harness's sessions are not calibrated."""
_URLS = ("url", "urls", "Url", "URL", "uri", "Uri")
_PATH_LISTS = ("file_paths", "paths", "files")


class GenericHarness(Harness):
    """Maps any tool call by what its arguments look like; unrecognised calls give ``[]``."""

    name = "generic"
    aliases = frozenset({"unknown"})

    def effects(self, call: ToolCall, ctx: AnalysisContext) -> list[Effect]:
        args = ToolArgs.of(call.arguments)
        ctx = args.context(ctx, _WORKDIRS)
        effects = [
            *_command(args, ctx),
            *_patches(args, ctx),
            *_file_change(args, ctx),
            *_urls(args),
            *_code(call.name, args, ctx),
        ]
        if not effects:
            effects = _lookup(call.name, args, ctx)
        return dedupe(effects)


def is_patch_text(text: str) -> bool:
    """Whether ``text`` looks like an apply_patch envelope or a unified diff."""
    return "*** Begin Patch" in text or _UNIFIED_DIFF.search(text) is not None


def _command(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    value = args.value("command", "cmd")
    if isinstance(value, str):
        if value in _EDITOR_COMMANDS and args.string(*_PATHS):
            return editor_effects(value, args, ctx)  # str_replace_editor under another name
        return shell(value, ctx)
    if isinstance(value, list):
        return argv_effects(value, ctx)
    return []


def _patches(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    text = args.string(*_PATCHES)
    if text is None and args.text is not None:
        text = args.text
    return patch(text, ctx) if text is not None and is_patch_text(text) else []


def _file_change(args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    if args.string("command") in _EDITOR_COMMANDS:
        return []
    path = args.string(*_PATHS)
    if not path or not path.strip():
        return []
    content = args.value(*_CONTENT)
    if isinstance(content, str):
        return [write(path, content, ctx)]
    edits = args.items("edits")
    if edits:
        return edits_effects(path, edits, ctx)
    if any(args.value(old, new) is not None for old, new in OLD_NEW_ALIASES):
        effect = old_new_effect(path, args, ctx)
        return [effect] if effect is not None else []
    find, replace = args.value("find"), args.value("replace")
    if isinstance(find, str) and isinstance(replace, str) and not _TEST_FILE.search(path):
        return [edit(path, find, replace, ctx)]
    return []


def _urls(args: ToolArgs) -> list[Effect]:
    value = args.value(*_URLS)
    urls = value if isinstance(value, list) else [value]
    return [network(url) for url in urls if isinstance(url, str) and url.strip()]


def _code(tool: str, args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    code = args.string("code")
    return python(code, ctx) if code is not None and _PYTHON_NAME.search(tool) else []


def _lookup(tool: str, args: ToolArgs, ctx: AnalysisContext) -> list[Effect]:
    """Reads, searches, listings and deletions, told apart by the tool's name."""
    path = args.string(*_PATHS, "dir", "directory")
    pattern = args.value("pattern", "query", "regex", "glob")
    query = args.string("query", "q", "search_query")
    if query is not None and _WEB_NAME.search(tool):
        return [web_search(query)]
    if _SEARCH_NAME.search(tool) and (pattern is not None or path):
        return [search(None if pattern is None else str(pattern), path, ctx)]
    if _LIST_NAME.search(tool):
        return [listing(path, ctx)]
    if _DELETE_NAME.match(tool):
        paths = [path] if path else args.items(*_PATH_LISTS)
        return [
            Effect("delete", path=ctx.resolve(p)) for p in paths if isinstance(p, str) and p.strip()
        ]
    if not _READ_NAME.search(tool):
        return []
    paths = [path] if path else args.items(*_PATH_LISTS)
    return [read(p, ctx) for p in paths if isinstance(p, str) and p.strip()]


@hookimpl
def safeagents_harnesses() -> list[Harness]:
    return [GenericHarness()]
