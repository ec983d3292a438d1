"""Redirections: ``< f`` reads, ``> f``/``>> f``/``&> f`` writes, heredocs and herestrings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from tree_sitter import Node

from safeagents._actions import Effect
from safeagents.analysis._shell._model import (
    Run,
    ShellState,
    Stream,
    is_pseudo_device,
    resolve_path,
)
from safeagents.analysis._shell._words import WordResolver


class Walking(Protocol):
    """The walker side redirections need: its run, word resolver, node text and scans."""

    run: Run
    resolver: WordResolver

    def text(self, node: Node) -> str:
        """The source text of ``node``."""

    def scan(self, node: Node, state: ShellState, depth: int) -> None:
        """Analyse any substitution found below ``node``."""


_WRITE_OPERATORS = frozenset((">", ">>", "&>", "&>>", ">|", ">&"))
_APPENDING = frozenset((">>", "&>>"))
_DUPLICATING = frozenset((">&", "<&", ">&-", "<&-"))
_CONTINUATIONS = frozenset(("pipeline", "list", "command", "redirected_statement", "subshell"))


@dataclass(frozen=True, slots=True)
class WriteTarget:
    path: str
    append: bool
    captures_stdout: bool


@dataclass(slots=True)
class Prepared:
    """The resolved redirections of one statement."""

    stdin: Stream | None = None
    targets: list[WriteTarget] = field(default_factory=list)
    extra_words: list[Node] = field(default_factory=list)
    """Words the grammar put after a redirect target that are really arguments."""
    continuations: list[Node] = field(default_factory=list)
    """Pipelines and list operands the grammar nests inside a heredoc redirect."""


class Redirections:
    def __init__(self, walker: Walking) -> None:
        self.walker = walker

    def prepare(self, nodes: list[Node], state: ShellState, depth: int) -> Prepared:
        """Resolve targets, emit reads for ``<``; writes wait for :meth:`emit_writes`."""
        prepared = Prepared()
        for node in nodes:
            self.walker.run.tick()
            if node.type == "file_redirect":
                self._file(node, state, depth, prepared)
            elif node.type == "heredoc_redirect":
                self._heredoc(node, state, depth, prepared)
            elif node.type == "herestring_redirect":
                self._herestring(node, state, depth, prepared)
            else:
                self.walker.scan(node, state, depth + 1)
        return prepared

    def emit_writes(self, prepared: Prepared, stdout: str | None) -> None:
        for target in prepared.targets:
            text = stdout if target.captures_stdout else None
            if target.append:
                effect = Effect("write", path=target.path, added=text)
            else:
                effect = Effect("write", path=target.path, content=text, added=text)
            self.walker.run.emit(effect)

    def _file(self, node: Node, state: ShellState, depth: int, prepared: Prepared) -> None:
        descriptor: str | None = None
        operator = ""
        destinations: list[Node] = []
        for index, child in enumerate(node.children):
            if child.type == "file_descriptor":
                descriptor = self.walker.text(child)
            elif node.field_name_for_child(index) == "destination":
                destinations.append(child)
            elif not child.is_named:
                operator = child.type
            elif child.type != "ERROR":
                self.walker.scan(child, state, depth + 1)
        if not destinations:
            return
        prepared.extra_words.extend(destinations[1:])
        target = self.walker.resolver.resolve_joined(destinations[0], state, depth + 1)
        if operator in _DUPLICATING and (target.text.isdigit() or target.text in ("-", "")):
            return
        path = resolve_path(state.ctx, target.text) if target.text else ""
        if not path or is_pseudo_device(path):
            if operator.startswith("<"):
                prepared.stdin = Stream(origin="file")
            return
        if operator.startswith("<"):
            self.walker.run.emit(Effect("read", path=path))
            prepared.stdin = Stream(origin="file")
            return
        if operator in _WRITE_OPERATORS:
            captures = operator.startswith("&") or descriptor in (None, "1")
            prepared.targets.append(WriteTarget(path, operator in _APPENDING, captures))

    def _heredoc(self, node: Node, state: ShellState, depth: int, prepared: Prepared) -> None:
        quoted = False
        strip_tabs = False
        body: Node | None = None
        nested: list[Node] = []
        for index, child in enumerate(node.children):
            kind = child.type
            if kind == "<<-":
                strip_tabs = True
            elif kind == "heredoc_start":
                quoted = any(char in self.walker.text(child) for char in "'\"\\")
            elif kind == "heredoc_body":
                body = child
            elif kind in ("file_redirect", "herestring_redirect"):
                nested.append(child)
            elif node.field_name_for_child(index) == "right" or kind in _CONTINUATIONS:
                prepared.continuations.append(child)
        text: str | None = None
        exact = True
        if body is not None:
            if quoted:
                text = self.walker.text(body)
            else:
                text, exact = self.walker.resolver.heredoc_body(body, state, depth + 1)
        if text is not None and strip_tabs:
            text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
        prepared.stdin = Stream(text=text, origin="heredoc", exact=exact and text is not None)
        if nested:
            inner = self.prepare(nested, state, depth + 1)
            prepared.targets.extend(inner.targets)
            prepared.extra_words.extend(inner.extra_words)
            prepared.stdin = inner.stdin or prepared.stdin

    def _herestring(self, node: Node, state: ShellState, depth: int, prepared: Prepared) -> None:
        words = [child for child in node.named_children]
        if not words:
            return
        word = self.walker.resolver.resolve_joined(words[0], state, depth + 1)
        prepared.stdin = Stream(text=word.text + "\n", origin="heredoc", exact=word.exact)
