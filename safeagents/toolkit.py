"""Helpers for writing harness plugins: decode a tool call's arguments, turn them into effects.

The generic fallback harness and the built-in harness plugins read calls with these, and a
third-party plugin may too::

    from safeagents.toolkit import ToolArgs, editor_effects, shell

    def effects(self, call, ctx):
        args = ToolArgs.of(call.arguments)
        ctx = args.context(ctx)  # follow a ``workdir``/``working_directory`` argument
        if call.name == "run":
            return shell(args.string("script") or "", ctx)
        if call.name == "editor":
            return editor_effects(args.string("command") or "", args, ctx)
        return None

Argument names every harness spells its own way:

- ``PATH_ALIASES``: names of a file-path argument (``path``, ``file_path``, ``filePath`` …).
- ``OLD_NEW_ALIASES``: ``(old, new)`` name pairs of an edit (``old_string``/``new_string`` …).
- ``WORKDIR_ALIASES``: names of a working-directory argument, the default of ``ToolArgs.context``.
"""

from safeagents._tool_args import (
    OLD_NEW_ALIASES,
    PATH_ALIASES,
    WORKDIR_ALIASES,
    ToolArgs,
    argv_effects,
    dedupe,
    edit,
    editor_effects,
    edits_effects,
    insertion,
    listing,
    network,
    old_new_effect,
    patch,
    python,
    read,
    search,
    shell,
    unknown_write,
    web_search,
    write,
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

ToolArgs.__module__ = __name__  # reprs and docs show safeagents.toolkit.ToolArgs
