"""Shell builtins with effects on the analysis: ``cd``, ``read``, ``echo``, ``eval``, ``source``."""

from __future__ import annotations

import re

from safeagents.analysis._shell._expand import decode_ansi_c
from safeagents.analysis._shell._model import Handler, Invocation, Stream
from safeagents.analysis._shell._options import parse, spec

_PRINTF_DIRECTIVE = re.compile(r"%(%|[-+ #0]*\d*(?:\.\d+)?([a-zA-Z]))")
_ECHO_FLAGS = re.compile(r"-[neE]+")
_TEMP_DIR = re.compile(r"\$\{?\w+\}?|\$\(\s*mktemp\s+(?:[^)]*\s)?-[a-zA-Z]*d[^)]*\)")
"""``cd``'s word naming a new directory: ``$(mktemp -d)``, or a variable bound to one."""


def _cd(invocation: Invocation) -> None:
    """Later paths resolve in the new directory; an unknown one stays spelled (``/w/$d/x``)."""
    parsed = parse(invocation.args, spec())
    state = invocation.state
    if not parsed.operands:
        state.chdir(state.ctx.home)
        return
    target = invocation.words[1 + parsed.indices[0]]
    if target.text == "-":
        if state.oldpwd is not None:
            state.chdir(state.oldpwd)
        return
    state.chdir(target.text)
    if _TEMP_DIR.fullmatch(target.text) and (
        target.text.startswith("$(") or target.text.strip("${}") in state.temp_dir_names
    ):
        state.scratch.dirs.add(state.ctx.cwd)


def _pushd(invocation: Invocation) -> None:
    previous = invocation.state.ctx.cwd
    before = invocation.state.ctx
    _cd(invocation)
    if invocation.state.ctx is not before:
        invocation.state.dir_stack.append(previous)


def _popd(invocation: Invocation) -> None:
    state = invocation.state
    if state.dir_stack:
        state.chdir(state.dir_stack.pop())


def _read(invocation: Invocation) -> None:
    """``read VAR``: bound to the one path piped in (``find … | while read f``), else unknown."""
    parsed = parse(invocation.args, spec(("-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u")))
    names = parsed.operands or ["REPLY"]
    paths = invocation.stdin.paths
    for name in names:
        invocation.state.variables.pop(name, None)
    if paths is not None and len(paths) == 1 and len(names) == 1:
        invocation.state.variables[names[0]] = paths[0]


def _echo(invocation: Invocation) -> Stream:
    args = invocation.args
    newline, escapes = True, False
    while args and _ECHO_FLAGS.fullmatch(args[0]):
        newline = newline and "n" not in args[0]
        escapes = "e" in args[0] or (escapes and "E" not in args[0])
        args = args[1:]
    exact = all(word.exact for word in invocation.words)
    text = " ".join(args)
    if escapes:
        text = decode_ansi_c(text)
    text += "\n" if newline else ""
    paths = tuple(args) if exact and args else None
    return Stream(text, paths, "pipe", exact)


def _printf(invocation: Invocation) -> Stream | None:
    args = invocation.args
    if args[:1] == ["-v"]:
        return None
    if args[:1] == ["--"]:
        args = args[1:]
    if not args or not all(word.exact for word in invocation.words):
        return None
    template, values = args[0], args[1:]
    directives = [match.group(2) for match in _PRINTF_DIRECTIVE.finditer(template)]
    if any(kind not in (None, "s", "b", "d", "i") for kind in directives):
        return None
    consumed = sum(1 for kind in directives if kind is not None)
    chunks: list[str] = []
    while True:
        chunk, values = _format_once(template, values)
        chunks.append(chunk)
        if not values or consumed == 0:
            break
    return Stream("".join(chunks), None, "pipe")


def _format_once(template: str, values: list[str]) -> tuple[str, list[str]]:
    remaining = list(values)

    def replace(match: re.Match[str]) -> str:
        if match.group(1) == "%":
            return "%"
        return remaining.pop(0) if remaining else ""

    return decode_ansi_c(_PRINTF_DIRECTIVE.sub(replace, template)), remaining


def _nothing(invocation: Invocation) -> Stream:
    return Stream("", None, "pipe")


def _eval(invocation: Invocation) -> None:
    if not all(word.exact for word in invocation.words):
        invocation.opaque = True
        return
    text = " ".join(invocation.args)
    if text.strip():
        invocation.interpreter.script(text, invocation.state, invocation.depth)


def _source(invocation: Invocation) -> None:
    parsed = parse(invocation.args, spec())
    if not parsed.operands:
        return
    word = invocation.words[1 + parsed.indices[0]]
    if word.process_substitution or not word.exact:
        invocation.opaque = True
        return
    invocation.emit_path("read", word.text)


HANDLERS: dict[str, Handler] = {
    "cd": _cd,
    "pushd": _pushd,
    "popd": _popd,
    "read": _read,
    "echo": _echo,
    "printf": _printf,
    ":": _nothing,
    "true": _nothing,
    "eval": _eval,
    "source": _source,
    ".": _source,
}
