"""Values shared by the shell walker and the command handlers: words, streams, state, budget."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Literal, NamedTuple, Protocol

from safeagents._actions import AnalysisContext, Effect, EffectKind

MAX_NODES = 50_000
"""Syntax nodes, words and commands one analysis may visit (shared by ``bash -c`` recursion)."""
MAX_PARSED_BYTES = 200_000
"""Bytes one analysis may hand to tree-sitter, re-parses (``bash -c``, ``eval``) included."""
MAX_NESTING = 48
"""Deepest nesting of statements and substitutions walked; deeper subtrees become opaque."""
MAX_LEVEL = 6
"""Deepest re-parse of a string as a script (``bash -c``, ``eval``, a heredoc fed to ``sh``)."""
MAX_EFFECTS = 2_000
"""Effects one analysis may produce before it stops and reports the rest as opaque."""
MAX_EXPANDED_CHARS = 2_000_000
"""Characters of variable values one analysis may substitute (``a=$a$a`` doubles each time)."""
MAX_EXPANSIONS = 1_024
"""Words one brace expansion, ``for`` loop, ``xargs`` input or ``find`` may produce; more
stops the analysis (dropping the rest would hide what they do)."""
DEFAULT_IFS = " \t\n"
"""``$IFS`` until a script sets it: ``rm${IFS}x`` is the two words ``rm`` and ``x``."""
OPAQUE_TEXT_LIMIT = 4_096
"""Characters of the script kept in the ``command`` of a fallback opaque exec."""


class BudgetExhausted(Exception):
    """The node or effect budget ran out; the walk stops with what it found."""


class Word(NamedTuple):
    """One shell word after quote removal and expansion of what is statically known."""

    text: str
    exact: bool = True
    process_substitution: bool = False


StreamOrigin = Literal["none", "pipe", "heredoc", "file"]


class Stream(NamedTuple):
    """What flows on stdin or stdout: its text and the file names it lists, when known."""

    text: str | None = None
    paths: tuple[str, ...] | None = None
    origin: StreamOrigin = "none"
    exact: bool = True
    """False when ``text`` is a best guess (a heredoc body with unknown ``$VAR``)."""
    producer: str | None = None
    """Source text of the pipeline stages that produce this stream."""

    @property
    def known_text(self) -> str | None:
        """``text`` when it is exactly what flows."""
        return self.text if self.exact else None

    @property
    def fed(self) -> bool:
        """Whether something is piped or redirected in (as opposed to a terminal)."""
        return self.origin in ("pipe", "heredoc")


NO_INPUT = Stream()
UNKNOWN_OUTPUT = Stream(origin="pipe")


_BORROWS = re.compile(
    rb"\.git\b|GIT_\w*=|--git-dir|--work-tree|alternates|\b(?:cp|rsync|tar|ln|mv|scp|unzip|cpio"
    rb"|ditto|install|fast-import|unpack-objects|index-pack|clone|fetch|pull|remote|bundle|am"
    rb"|worktree|submodule|subtree|replace)\b"
)
"""Words of a script that may bring another repository's history into one it made: a copy or
link (``cp -r /workspace/.git .``), a ``.git`` path, git's variables and imports."""


@dataclass(slots=True)
class ScratchRepos:
    """Repositories a script made for itself: directories ``mktemp -d`` made that it entered
    by ``cd``, and those of them where it ran ``git init``. None counts as the script's own
    once the text of the script, or of any script it ran, holds a word that may bring other
    history in (:data:`_BORROWS`), wherever that word stands: a copy after ``git init`` of
    ``.git`` or of the whole checkout is the task's history again."""

    dirs: set[str] = field(default_factory=set)
    repos: set[str] = field(default_factory=set)
    texts: list[bytes] = field(default_factory=list)
    borrowed: bool = False
    checked: int = 0
    """How many of ``texts`` were searched for :data:`_BORROWS`."""

    def owns(self, repo: str) -> bool:
        """Whether ``repo`` is one the script made and filled only with its own history."""
        if repo not in self.repos:
            return False
        while not self.borrowed and self.checked < len(self.texts):
            self.borrowed = _BORROWS.search(self.texts[self.checked]) is not None
            self.checked += 1
        return not self.borrowed

    def snapshot(self) -> tuple[object, ...]:
        return (frozenset(self.dirs), frozenset(self.repos), len(self.texts) if self.repos else 0)


@dataclass(slots=True)
class ShellState:
    """What earlier commands of the script established: directory and literal variables."""

    ctx: AnalysisContext
    variables: dict[str, str] = field(default_factory=dict)
    dir_stack: list[str] = field(default_factory=list)
    oldpwd: str | None = None
    temp_dir_names: frozenset[str] = frozenset()
    """Variables holding a directory ``mktemp -d`` made."""
    scratch: ScratchRepos = field(default_factory=ScratchRepos)
    """Repositories the script made for itself; shared with subshells, like the disk."""

    def snapshot(self) -> tuple[object, ...]:
        """Everything later commands depend on, as a hashable value."""
        return (
            self.ctx,
            tuple(self.variables.items()),
            tuple(self.dir_stack),
            self.oldpwd,
            self.temp_dir_names,
            self.scratch.snapshot(),
        )

    def fork(self) -> ShellState:
        """A copy for a subshell, whose changes do not leak back."""
        return ShellState(
            self.ctx,
            dict(self.variables),
            list(self.dir_stack),
            self.oldpwd,
            self.temp_dir_names,
            self.scratch,
        )

    def chdir(self, path: str) -> None:
        self.oldpwd = self.ctx.cwd
        self.ctx = _with_cwd(self.ctx, resolve_path(self.ctx, path))

    def with_cwd(self, path: str) -> ShellState:
        forked = self.fork()
        forked.ctx = _with_cwd(self.ctx, resolve_path(self.ctx, path))
        return forked

    def lookup(self, name: str) -> str | None:
        if name in self.variables:
            return self.variables[name]
        if name == "HOME":
            return self.ctx.home
        if name == "PWD":
            return self.ctx.cwd
        if name == "OLDPWD":
            return self.oldpwd
        if name == "IFS":
            return DEFAULT_IFS
        return None


class Run:
    """Budget and effect sink shared by every level of one :func:`analyze_shell` call."""

    def __init__(self) -> None:
        self.effects: list[Effect] = []
        self.seen: set[Effect] = set()
        self.nodes = 0
        self.parsed_bytes = 0
        self.expanded_chars = 0

    def tick(self, count: int = 1) -> None:
        self.nodes += count
        if self.nodes > MAX_NODES:
            raise BudgetExhausted

    def charge_parse(self, size: int) -> None:
        self.parsed_bytes += size
        if self.parsed_bytes > MAX_PARSED_BYTES:
            raise BudgetExhausted

    def charge_expansion(self, size: int) -> None:
        self.expanded_chars += size
        if self.expanded_chars > MAX_EXPANDED_CHARS:
            raise BudgetExhausted

    def emit(self, effect: Effect) -> None:
        self.insert(len(self.effects), effect)

    def insert(self, index: int, effect: Effect) -> None:
        """Record ``effect`` at ``index`` unless an identical one was already recorded."""
        seen = self.seen
        before = len(seen)
        seen.add(effect)
        if len(seen) == before:
            return
        if len(self.effects) >= MAX_EFFECTS:
            seen.discard(effect)
            raise BudgetExhausted
        self.effects.insert(index, effect)


class Interpreter(Protocol):
    """Lets handlers analyse nested scripts and commands (``bash -c``, ``find -exec``)."""

    level: int
    """How many times the text being analysed was re-parsed from a string."""

    def script(self, text: str, state: ShellState, depth: int, stdin: Stream = NO_INPUT) -> None:
        """Analyse ``text`` as a shell script run in ``state``."""

    def words(self, words: list[Word], state: ShellState, depth: int, command: str) -> Stream:
        """Analyse already resolved words as one simple command."""


@dataclass(slots=True)
class Invocation:
    """One simple command as a handler sees it, after wrappers are unwrapped."""

    words: list[Word]
    state: ShellState
    stdin: Stream
    command: str
    run: Run
    depth: int
    interpreter: Interpreter
    opaque: bool = False
    own_repo: bool = False
    """A ``git`` command run in a repository the script made for itself
    (:meth:`ScratchRepos.owns`)."""
    name: str = ""
    """Basename of the command word (``/usr/bin/rm`` → ``rm``); computed when not given."""

    def __post_init__(self) -> None:
        if not self.name:
            self.name = command_basename(self.words[0].text)

    @property
    def argv(self) -> list[str]:
        return [word.text for word in self.words]

    @property
    def args(self) -> list[str]:
        return [word.text for word in self.words[1:]]

    @property
    def ctx(self) -> AnalysisContext:
        return self.state.ctx

    def path(self, raw: str) -> str:
        return resolve_path(self.state.ctx, raw)

    def emit(self, effect: Effect) -> None:
        self.run.emit(effect)

    def emit_path(
        self,
        kind: EffectKind,
        raw: str,
        *,
        content: str | None = None,
        added: str | None = None,
        command: str | None = None,
        pattern: str | None = None,
    ) -> None:
        """Emit ``kind`` on the resolved ``raw`` unless it is a pseudo-device (``/dev/null``)."""
        path = self.path(raw)
        if not is_pseudo_device(path):
            self.run.emit(
                Effect(
                    kind, path=path, content=content, added=added, command=command, pattern=pattern
                )
            )


Handler = Callable[[Invocation], Stream | None]


_PLAIN_CONTEXT = tuple(item.name for item in fields(AnalysisContext)) == ("cwd", "home")


def _with_cwd(ctx: AnalysisContext, cwd: str) -> AnalysisContext:
    """``replace(ctx, cwd=cwd)``, without its cost in the common case of a plain context."""
    if _PLAIN_CONTEXT and type(ctx) is AnalysisContext:
        return AnalysisContext(cwd, ctx.home)
    return replace(ctx, cwd=cwd)


_RESOLVED: dict[tuple[str, str, str], str] = {}
_RESOLVED_LIMIT = 4_096


def resolve_path(ctx: AnalysisContext, raw: str) -> str:
    """``ctx.resolve(raw)``, memoised: the same paths come back in call after call."""
    if type(ctx) is not AnalysisContext:
        return ctx.resolve(raw)
    key = (raw, ctx.cwd, ctx.home)
    resolved = _RESOLVED.get(key)
    if resolved is None:
        if len(_RESOLVED) >= _RESOLVED_LIMIT:
            _RESOLVED.clear()
        resolved = _RESOLVED[key] = ctx.resolve(raw)
    return resolved


def command_basename(text: str) -> str:
    """``posixpath.basename`` of ``text`` without trailing slashes, else ``text`` itself."""
    stripped = text.rstrip("/")
    return stripped[stripped.rfind("/") + 1 :] or text


_PSEUDO_DEVICES = frozenset(
    ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
     "/dev/stdin", "/dev/stdout", "/dev/stderr")
)  # fmt: skip


def is_pseudo_device(path: str) -> bool:
    """``/dev/null``, ``/dev/stdout``, ``/dev/fd/3``…: no file is touched (``/dev/sda`` is)."""
    return path in _PSEUDO_DEVICES or path.startswith(("/dev/fd/", "/dev/pts/", "/proc/self/fd/"))


def opaque_exec(text: str) -> Effect:
    """The fallback effect for text the analyser could not take apart."""
    return Effect("exec", command=text[:OPAQUE_TEXT_LIMIT], opaque=True)


def gave_up(text: str, reason: str = "budget") -> Effect:
    """The effect for text left unanalysed because a budget ran out (or the analyser failed)."""
    return Effect("exec", command=text[:OPAQUE_TEXT_LIMIT], opaque=True, unanalysable=reason)
