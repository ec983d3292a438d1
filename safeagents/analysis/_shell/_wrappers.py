"""Commands that run another command: ``sudo``, ``env``, ``timeout``, ``xargs``…"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, replace

from safeagents.analysis._shell._model import (
    MAX_EXPANSIONS,
    BudgetExhausted,
    ShellState,
    Stream,
    Word,
    command_basename,
)
from safeagents.analysis._shell._options import Spec, parse, spec

_MAX_WRAPPERS = 16
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True, slots=True)
class Unwrapped:
    """The effective command, the state it runs in, and a script a wrapper runs as text."""

    words: list[Word]
    state: ShellState
    opaque: bool = False
    script: str | None = None


Rule = Callable[[Unwrapped, Stream], Unwrapped | None]


def is_wrapper(name: str) -> bool:
    """Whether the command ``name`` (a basename) runs another command given in its arguments."""
    return name in _RULES


def unwrap(words: list[Word], state: ShellState, stdin: Stream) -> Unwrapped:
    """Strip wrappers until the command that does the work; a bare wrapper stays itself."""
    current = Unwrapped(words, state)
    for _ in range(_MAX_WRAPPERS):
        rule = _RULES.get(command_basename(current.words[0].text))
        if rule is None:
            break
        inner = rule(current, stdin)
        if inner is None:
            break
        current = replace(inner, opaque=inner.opaque or current.opaque)
        if inner.script is not None or not inner.words[0].exact:
            break
    return current


def _texts(words: list[Word]) -> list[str]:
    return [word.text for word in words]


def _inner(
    current: Unwrapped,
    options: Spec,
    *,
    skip_operands: int = 0,
    skip_assignments: bool = False,
    chdir: tuple[str, ...] = (),
) -> Unwrapped | None:
    """The command after the wrapper's options (and ``skip_operands`` of its operands)."""
    args = current.words[1:]
    parsed = parse(_texts(args), options)
    if len(parsed.indices) <= skip_operands:
        return None
    start = parsed.indices[skip_operands]
    if skip_assignments:
        while start < len(args) and _ASSIGNMENT.match(args[start].text):
            start += 1
    if start >= len(args):
        return None
    state = current.state
    directory = parsed.value(*chdir) if chdir else None
    if directory:
        state = state.with_cwd(directory)
    return Unwrapped(args[start:], state)


def _simple(
    options: Spec,
    *,
    skip_operands: int = 0,
    skip_assignments: bool = False,
    chdir: tuple[str, ...] = (),
) -> Rule:
    def rule(current: Unwrapped, stdin: Stream) -> Unwrapped | None:
        return _inner(
            current,
            options,
            skip_operands=skip_operands,
            skip_assignments=skip_assignments,
            chdir=chdir,
        )

    return rule


def _env(current: Unwrapped, stdin: Stream) -> Unwrapped | None:
    options = spec(("-u", "--unset", "-C", "--chdir", "-S", "--split-string"), posix=True)
    args = current.words[1:]
    parsed = parse(_texts(args), options)
    split = parsed.value("-S", "--split-string")
    if split is not None:
        rest = (
            [shlex.quote(arg.text) for arg in args[parsed.indices[0] :]] if parsed.indices else []
        )
        return Unwrapped(current.words, current.state, script=" ".join([split, *rest]))
    return _inner(current, options, skip_assignments=True, chdir=("-C", "--chdir"))


def _command(current: Unwrapped, stdin: Stream) -> Unwrapped | None:
    parsed = parse(_texts(current.words[1:]), spec(posix=True))
    if parsed.has("-v", "-V"):
        return None
    return _inner(current, spec(posix=True))


def _busybox(current: Unwrapped, stdin: Stream) -> Unwrapped | None:
    return Unwrapped(current.words[1:], current.state) if len(current.words) > 1 else None


def _runner(current: Unwrapped, stdin: Stream) -> Unwrapped | None:
    """``uv run``, ``poetry run``, ``pipenv run``."""
    if len(current.words) < 2 or current.words[1].text != "run":
        return None
    options = spec(
        ("--with", "--python", "-p", "--project", "--directory", "--package", "--extra",
         "--group", "--env-file", "--with-requirements", "--index", "--index-url", "-w"),
        posix=True,
    )  # fmt: skip
    inner = _inner(Unwrapped(current.words[1:], current.state), options, chdir=("--directory",))
    return inner


def _watch(current: Unwrapped, stdin: Stream) -> Unwrapped | None:
    options = spec(("-n", "--interval", "-q", "--equexit"), posix=True)
    args = current.words[1:]
    parsed = parse(_texts(args), options)
    if not parsed.indices:
        return None
    if parsed.has("-x", "--exec"):
        return Unwrapped(args[parsed.indices[0] :], current.state)
    inner = args[parsed.indices[0] :]
    opaque = not all(word.exact for word in inner)
    script = " ".join(word.text for word in inner)
    return Unwrapped(current.words, current.state, opaque=opaque, script=script)


def _xargs(current: Unwrapped, stdin: Stream) -> Unwrapped | None:
    """``xargs CMD``: CMD gets the file names piped in, when the producer lists them."""
    options = spec(
        ("-I", "-n", "-L", "-P", "-d", "-s", "-E", "-a", "--max-args", "--max-lines",
         "--max-procs", "--delimiter", "--arg-file", "--eof", "--max-chars",
         "--process-slot-var"),
        posix=True,
    )  # fmt: skip
    args = current.words[1:]
    parsed = parse(_texts(args), options)
    inner = args[parsed.indices[0] :] if parsed.indices else [Word("echo")]
    placeholder = parsed.value("-I", "--replace")
    if placeholder is None and parsed.has("-i", "--replace"):
        placeholder = "{}"
    paths = stdin.paths if stdin.origin == "pipe" and not parsed.has("-a", "--arg-file") else None
    if paths is None:
        return Unwrapped(inner, current.state, opaque=True)
    if len(paths) > MAX_EXPANSIONS:
        raise BudgetExhausted
    if not placeholder:
        return Unwrapped([*inner, *(Word(path) for path in paths)], current.state)
    substituted: list[Word] = []
    for word in inner:
        if placeholder in word.text:
            substituted.extend(
                Word(word.text.replace(placeholder, path), word.exact) for path in paths
            )
        else:
            substituted.append(word)
    return Unwrapped(substituted, current.state)


_PLAIN = spec(posix=True)
_SUDO = spec(("-u", "-g", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R", "-h", "--user",
              "--group", "--prompt", "--chdir", "--role", "--type", "--other-user",
              "--close-from", "--command-timeout", "--host"), posix=True)  # fmt: skip
_TIMEOUT = spec(("-s", "--signal", "-k", "--kill-after"), posix=True)
_RULES: dict[str, Rule] = {
    "env": _env,
    "sudo": _simple(_SUDO, skip_assignments=True, chdir=("-D", "--chdir")),
    "doas": _simple(spec(("-u", "-C"), posix=True)),
    "timeout": _simple(_TIMEOUT, skip_operands=1),
    "gtimeout": _simple(_TIMEOUT, skip_operands=1),
    "nice": _simple(spec(("-n", "--adjustment"), posix=True)),
    "ionice": _simple(spec(("-c", "-n", "-p", "-P", "-u", "--class", "--classdata"), posix=True)),
    "nohup": _simple(_PLAIN),
    "setsid": _simple(_PLAIN),
    "unbuffer": _simple(_PLAIN),
    "builtin": _simple(_PLAIN),
    "coproc": _simple(_PLAIN),
    "command": _command,
    "exec": _simple(spec(("-a",), posix=True)),
    "stdbuf": _simple(spec(("-i", "-o", "-e", "--input", "--output", "--error"), posix=True)),
    "time": _simple(spec(("-f", "--format", "-o", "--output"), posix=True)),
    "busybox": _busybox,
    "uv": _runner,
    "poetry": _runner,
    "pipenv": _runner,
    "watch": _watch,
    "xargs": _xargs,
}
