"""``git`` subcommands with file or network effects; every git call also keeps its exec argv."""

from __future__ import annotations

from collections.abc import Callable

from safeagents._actions import Effect
from safeagents.analysis._shell._foreign import patch_effects
from safeagents.analysis._shell._model import Handler, Invocation, Stream
from safeagents.analysis._shell._network import network_effect
from safeagents.analysis._shell._options import parse, spec
from safeagents.analysis._shell._search import grep_effects

_GLOBAL_VALUED = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                            "--super-prefix", "--config-env"))  # fmt: skip
_FETCH = spec(("--depth", "-j", "--jobs", "--upload-pack", "--negotiation-tip", "-o",
               "--server-option", "--refmap", "--shallow-since", "--shallow-exclude", "-s",
               "--strategy", "-X", "--strategy-option", "--deepen"))  # fmt: skip
_CLONE = spec(("-b", "--branch", "-o", "--origin", "--depth", "-c", "--config", "--reference",
               "--separate-git-dir", "-u", "--upload-pack", "-j", "--jobs", "--shallow-since",
               "--shallow-exclude", "--template", "--bundle-uri"))  # fmt: skip
_GIT_GREP = spec(("-e", "-f", "-A", "-B", "-C", "-m", "--max-depth", "--threads", "-O",
                  "--open-files-in-pager", "--max-count", "--context"))  # fmt: skip
_INIT = spec(("-b", "--initial-branch", "--template", "--separate-git-dir", "--object-format",
              "--ref-format"))  # fmt: skip
_IMPORTS = frozenset(("fetch", "pull", "remote", "clone", "submodule", "subtree", "worktree",
                      "bundle", "am", "replace"))  # fmt: skip
"""Subcommands that bring another repository's history in."""
_ELSEWHERE = ("--git-dir", "--work-tree", "--namespace")
_WORKTREE_RESETS = frozenset(("--hard", "--merge", "--keep"))


def _split_pathspecs(args: list[str]) -> tuple[list[str], list[str] | None]:
    """Arguments before ``--`` and the paths after it (``None`` without ``--``)."""
    if "--" in args:
        cut = args.index("--")
        return args[:cut], args[cut + 1 :]
    return args, None


def _rm(invocation: Invocation, args: list[str]) -> None:
    parsed = parse(args, spec(("--pathspec-from-file",)))
    if parsed.has("-n", "--dry-run"):
        return
    for path in parsed.operands:
        invocation.emit_path("delete", path)


def _mv(invocation: Invocation, args: list[str]) -> None:
    operands = parse(args, spec()).operands
    if len(operands) < 2:
        return
    *sources, destination = operands
    into = len(sources) > 1 or destination.endswith("/")
    for source in sources:
        target = destination.rstrip("/") + "/" + source.rstrip("/").rsplit("/", 1)[-1]
        invocation.emit(
            Effect(
                "move",
                path=invocation.path(source),
                dest=invocation.path(target if into else destination),
            )
        )


def _checkout(invocation: Invocation, args: list[str]) -> None:
    head, paths = _split_pathspecs(args)
    parsed = parse(head, spec(("-b", "-B", "--orphan", "--conflict", "--pathspec-from-file")))
    if paths is None:
        if parsed.has("-b", "-B", "--orphan") or len(parsed.operands) < 2:
            paths = [op for op in parsed.operands if op == "." or _looks_like_file(op)]
        else:
            paths = parsed.operands[1:]
    for path in paths:
        invocation.emit_path("write", path)


def _looks_like_file(operand: str) -> bool:
    tail = operand.rsplit("/", 1)[-1]
    return "." in tail.strip(".") and not operand.startswith(("origin/", "refs/"))


def _restore(invocation: Invocation, args: list[str]) -> None:
    head, paths = _split_pathspecs(args)
    parsed = parse(head, spec(("-s", "--source", "--pathspec-from-file")))
    staged_only = parsed.has("-S", "--staged") and not parsed.has("-W", "--worktree")
    if staged_only:
        return
    for path in [*parsed.operands, *(paths or [])]:
        invocation.emit_path("write", path)


def _reset(invocation: Invocation, args: list[str]) -> None:
    if any(arg in _WORKTREE_RESETS for arg in args):
        invocation.emit(Effect("write", path=invocation.ctx.cwd))


def _stash(invocation: Invocation, args: list[str]) -> None:
    action = args[0] if args and not args[0].startswith("-") else "push"
    if action not in ("push", "save", "pop", "apply"):
        return
    _head, paths = _split_pathspecs(args)
    for path in paths or ["."]:
        invocation.emit_path("write", path)


def _clean(invocation: Invocation, args: list[str]) -> None:
    parsed = parse(args, spec(("-e", "--exclude")))
    forced = any(name == "--force" or (not name.startswith("--") and "f" in name)
                 for name, _ in parsed.options)  # fmt: skip
    if not forced or parsed.has("-n", "--dry-run"):
        return
    for path in parsed.operands or ["."]:
        invocation.emit_path("delete", path)


def _clone(invocation: Invocation, args: list[str]) -> None:
    operands = parse(args, _CLONE).operands
    if operands:
        invocation.emit(network_effect(operands[0]))


def _fetch(invocation: Invocation, args: list[str]) -> None:
    operands = parse(args, _FETCH).operands
    invocation.emit(network_effect(operands[0]) if operands else Effect("network"))


def _apply(invocation: Invocation, args: list[str]) -> None:
    parsed = parse(args, spec(("-p", "-C", "--directory", "--exclude", "--include", "--whitespace",
                               "--build-fake-ancestor")))  # fmt: skip
    files = [operand for operand in parsed.operands if operand != "-"]
    for file in files:
        invocation.emit_path("read", file)
    text = invocation.stdin.known_text
    if not files and text is not None and not parsed.has("--check", "--stat", "--numstat"):
        effects = patch_effects(text, invocation.ctx, invocation.interpreter.level)
        if effects is None:
            invocation.opaque = True
        for effect in effects or []:
            invocation.emit(effect)
    elif not files and invocation.stdin.fed:
        invocation.opaque = True


def _grep(invocation: Invocation, args: list[str]) -> Stream:
    return grep_effects(invocation, args, _GIT_GREP, recursive=True)


def _ls_files(invocation: Invocation, args: list[str]) -> Stream:
    parsed = parse(args, spec(("-x", "--exclude", "-X", "--exclude-from", "--format")))
    paths = parsed.operands or ["."]
    return Stream(None, tuple(invocation.path(path) + "/**" for path in paths), "pipe")


_SUBCOMMANDS: dict[str, Callable[[Invocation, list[str]], Stream | None]] = {
    "rm": _rm,
    "mv": _mv,
    "checkout": _checkout,
    "restore": _restore,
    "reset": _reset,
    "stash": _stash,
    "clean": _clean,
    "clone": _clone,
    "fetch": _fetch,
    "pull": _fetch,
    "ls-remote": _fetch,
    "apply": _apply,
    "grep": _grep,
    "ls-files": _ls_files,
}


def _init(invocation: Invocation, args: list[str]) -> None:
    """``git init`` in a directory the script made starts a history of the agent's own."""
    operands = parse(args, _INIT).operands
    repo = invocation.path(operands[0]) if operands else invocation.ctx.cwd
    if repo in invocation.state.scratch.dirs:
        invocation.state.scratch.repos.add(repo)


def _git(invocation: Invocation) -> Stream | None:
    args = invocation.args
    index = 0
    while index < len(args) and args[index].startswith("-"):
        option = args[index]
        if option == "-C" and index + 1 < len(args):
            invocation.state = invocation.state.with_cwd(args[index + 1])
        if option in _GLOBAL_VALUED:
            index += 1
        index += 1
    if index >= len(args):
        return None
    repo = invocation.ctx.cwd
    if args[index] == "init":
        _init(invocation, args[index + 1 :])
    elif (
        args[index] in _IMPORTS
        or any(arg.startswith(_ELSEWHERE) for arg in args[:index])
        or "GIT_" in invocation.command
    ):
        invocation.state.scratch.repos.discard(repo)
        return _subcommand(invocation, args, index)
    invocation.own_repo = invocation.state.scratch.owns(repo)
    return _subcommand(invocation, args, index)


def _subcommand(invocation: Invocation, args: list[str], index: int) -> Stream | None:
    handler = _SUBCOMMANDS.get(args[index])
    return handler(invocation, args[index + 1 :]) if handler is not None else None


HANDLERS: dict[str, Handler] = {"git": _git}
