"""One simple command: its words, redirections, wrappers, handler and ``exec`` effect."""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Protocol

from tree_sitter import Node

from safeagents._actions import Effect
from safeagents.analysis._shell._dispatch import handler_for
from safeagents.analysis._shell._expand import unescape_unquoted
from safeagents.analysis._shell._model import (
    NO_INPUT,
    UNKNOWN_OUTPUT,
    Interpreter,
    Invocation,
    ShellState,
    Stream,
    Word,
    command_basename,
)
from safeagents.analysis._shell._redirects import Prepared, Redirections, Walking
from safeagents.analysis._shell._wrappers import is_wrapper, unwrap


class Walker(Walking, Interpreter, Protocol):
    """The walker side simple commands need: redirections, assignments, nested scripts."""

    source: bytes
    redirections: Redirections

    def assign(self, node: Node, state: ShellState, depth: int) -> None:
        """Record a variable assignment."""

    def continuations(
        self, nodes: list[Node], output: Stream, state: ShellState, depth: int
    ) -> Stream:
        """Commands nested inside a heredoc redirect."""


_SEPARATORS = frozenset((";", "&", "&&", "||", "|", "|&", ";;", "\n"))
_REDIRECTS = frozenset(("file_redirect", "heredoc_redirect", "herestring_redirect"))
_LINE_CONTINUATION = b"\\\n"
_START_BYTE = attrgetter("start_byte")


@dataclass(frozen=True, slots=True)
class _Lost:
    """Source text between tree nodes that is a word the grammar left out."""

    start_byte: int
    text: str

    @property
    def end_byte(self) -> int:
        return self.start_byte + len(self.text.encode())


class _Segment:
    """The parts of one simple command (tree-sitter may glue several into one node)."""

    __slots__ = ("arguments", "assignments", "end", "name", "others", "redirects", "start")

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end
        self.assignments: list[Node] = []
        self.name: Node | None = None
        self.arguments: list[Node] = []
        self.redirects: list[Node] = []
        self.others: list[Node] = []


class SimpleCommands:
    def __init__(self, walker: Walker) -> None:
        self.walker = walker
        self.run = walker.run

    def analyse(
        self,
        node: Node,
        state: ShellState,
        depth: int,
        stdin: Stream,
        redirects: list[Node] | None,
    ) -> Stream:
        """Analyse a ``command`` node with the redirections of its enclosing statement."""
        segments = self._segments(node)
        first = segments[0]
        if redirects:
            first.redirects = redirects + first.redirects
        output = self._segment(first, state, depth, stdin)
        for segment in segments[1:]:
            output = self._segment(segment, state, depth, NO_INPUT)
        return output

    def run_words(
        self,
        words: list[Word],
        state: ShellState,
        depth: int,
        stdin: Stream,
        prepared: Prepared | None,
        command: str,
    ) -> Stream:
        """Unwrap, dispatch to the handler and emit the ``exec`` effect of resolved words."""
        run = self.run
        run.tick()
        if prepared is not None and prepared.stdin is not None:
            stdin = prepared.stdin
        if not words:
            return UNKNOWN_OUTPUT
        argv = tuple([word.text for word in words])
        first = words[0]
        if not first.exact or not first.text:
            run.emit(Effect("exec", argv0=first.text, argv=argv, command=command, opaque=True))
            if prepared is not None:
                self.walker.redirections.emit_writes(prepared, None)
            return UNKNOWN_OUTPUT
        script: str | None = None
        name = command_basename(first.text)
        if is_wrapper(name):
            unwrapped = unwrap(words, state, stdin)
            invocation = Invocation(
                unwrapped.words,
                unwrapped.state,
                stdin,
                command,
                run,
                depth,
                self.walker,
                opaque=unwrapped.opaque,
            )
            script = unwrapped.script
        else:
            invocation = Invocation(
                words, state, stdin, command, run, depth, self.walker, name=name
            )
        mark = len(run.effects)
        if script is not None:
            self.walker.script(script, invocation.state, depth)
        handler = handler_for(invocation.name)
        output = handler(invocation) if handler is not None else None
        if invocation.opaque and stdin.origin == "pipe" and stdin.producer:
            command = f"{stdin.producer} | {command}"
        opaque = invocation.opaque or not all([word.exact for word in words])
        exec_effect = Effect(
            "exec",
            argv0=invocation.name,
            argv=argv,
            command=command,
            opaque=opaque,
            own_repo=invocation.own_repo,
        )
        run.insert(mark, exec_effect)
        if prepared is not None:
            self.walker.redirections.emit_writes(prepared, None if output is None else output.text)
        if output is None:
            return UNKNOWN_OUTPUT
        if output.origin == "pipe" and output.producer is None:
            return output
        return Stream(output.text, output.paths, "pipe", output.exact)

    def _segment(self, segment: _Segment, state: ShellState, depth: int, stdin: Stream) -> Stream:
        walker = self.walker
        for other in segment.others:
            walker.scan(other, state, depth + 1)
        name = segment.name
        if name is None:
            for assignment in segment.assignments:
                walker.assign(assignment, state, depth)
            prepared = walker.redirections.prepare(segment.redirects, state, depth)
            for word in prepared.extra_words:
                walker.scan(word, state, depth + 1)
            walker.redirections.emit_writes(prepared, "" if prepared.targets else None)
            return walker.continuations(prepared.continuations, UNKNOWN_OUTPUT, state, depth)
        if segment.assignments and self._newline_before(segment.assignments[-1], name):
            for assignment in segment.assignments:
                walker.assign(assignment, state, depth)
        else:
            for assignment in segment.assignments:
                walker.scan(assignment, state, depth + 1)
        if not segment.redirects:
            words = self._blank_separated(name, segment, state, depth)
            if words is None:
                words = self._resolve(self._with_lost_words(name, segment, []), state, depth)
            command = walker.resolver.span_text(segment.start, segment.end).strip()
            return self.run_words(words, state, depth, stdin, None, command)
        prepared = walker.redirections.prepare(segment.redirects, state, depth)
        extra_words = prepared.extra_words
        words = None if extra_words else self._blank_separated(name, segment, state, depth)
        if words is None:
            nodes = self._with_lost_words(name, segment, extra_words)
            words = self._resolve(nodes, state, depth)
        start, end = _span(segment)
        command = walker.resolver.span_text(start, end).strip()
        output = self.run_words(words, state, depth, stdin, prepared, command)
        return walker.continuations(prepared.continuations, output, state, depth)

    def _blank_separated(
        self, name: Node, segment: _Segment, state: ShellState, depth: int
    ) -> list[Word] | None:
        """The words of a segment whose nodes follow each other with only blanks between.

        That is the common case, in which no word was lost and none is glued to the next by a
        backslash-newline; ``None`` asks for the general :meth:`_resolve` instead.
        """
        source = self.walker.source
        cursor = name.start_byte
        for node in (name, *segment.arguments, *segment.redirects, *segment.others):
            start = node.start_byte
            if start != cursor and (start < cursor or not source[cursor:start].isspace()):
                return None
            cursor = node.end_byte
        resolve = self.walker.resolver.resolve
        words = resolve(name, state, depth + 1)
        for argument in segment.arguments:
            words.extend(resolve(argument, state, depth + 1))
        return words

    def _with_lost_words(
        self, name: Node, segment: _Segment, extra_words: list[Node]
    ) -> list[Node | _Lost]:
        """The word nodes of ``segment`` and the words the grammar lost, in source order."""
        nodes: list[Node | _Lost] = [name, *segment.arguments, *extra_words]
        nodes.extend(self._lost_words(name, segment, nodes))
        nodes.sort(key=_START_BYTE)
        return nodes

    def _resolve(self, nodes: list[Node | _Lost], state: ShellState, depth: int) -> list[Word]:
        """Resolve word nodes, joining those split by a backslash-newline (``r\\⏎m``)."""
        resolver = self.walker.resolver
        source = self.walker.source
        words: list[Word] = []
        previous_end: int | None = None
        for node in nodes:
            if isinstance(node, _Lost):
                resolved = [Word(unescape_unquoted(node.text))]
            else:
                resolved = resolver.resolve(node, state, depth + 1)
            start = node.start_byte
            glued = (
                previous_end is not None
                and start - previous_end == len(_LINE_CONTINUATION)
                and source[previous_end:start] == _LINE_CONTINUATION
            )
            previous_end = node.end_byte
            if glued and words and resolved:
                head = words.pop()
                first = resolved[0]
                resolved[0] = Word(
                    head.text + first.text,
                    head.exact and first.exact,
                    head.process_substitution or first.process_substitution,
                )
            words.extend(resolved)
        return words

    def _lost_words(self, name: Node, segment: _Segment, words: list[Node | _Lost]) -> list[_Lost]:
        """Words the grammar dropped from the tree (the ``-`` of ``python - <<EOF``)."""
        source = self.walker.source
        name_start = name.start_byte
        covered = sorted(
            [
                (node.start_byte, node.end_byte)
                for node in [*words, *segment.redirects, *segment.others]
                if isinstance(node, Node) and node.end_byte > name_start
            ]
        )
        lost: list[_Lost] = []
        cursor = name_start
        for start, end in covered:
            if start > cursor and not source[cursor:start].isspace():
                gap = (
                    source[cursor:start]
                    .replace(_LINE_CONTINUATION, b" ")
                    .decode("utf-8", "replace")
                )
                offset = cursor
                for token in gap.split():
                    lost.append(_Lost(offset + gap.index(token), token))
            cursor = max(cursor, end)
        return lost

    def _newline_before(self, assignment: Node, name: Node) -> bool:
        return b"\n" in self.walker.source[assignment.end_byte : name.start_byte]

    def _segments(self, node: Node) -> list[_Segment]:
        current = _Segment(node.start_byte, node.end_byte)
        segments = [current]
        field_name_for_child = node.field_name_for_child
        for index, child in enumerate(node.children):
            kind = child.type
            if kind == "ERROR" and self.walker.text(child).strip() in _SEPARATORS:
                current.end = child.start_byte
                current = _Segment(child.end_byte, node.end_byte)
                segments.append(current)
                continue
            if kind == "variable_assignment" and current.name is None:
                current.assignments.append(child)
                continue
            field_name = field_name_for_child(index)
            if field_name == "name" or (kind == "command_name" and current.name is None):
                current.name = child
            elif kind in _REDIRECTS:
                current.redirects.append(child)
            elif field_name == "argument" or (current.name is None and kind == "word"):
                if current.name is None:
                    current.name = child
                else:
                    current.arguments.append(child)
            elif child.is_named:
                current.others.append(child)
        for segment in segments:
            if segment.name is None and segment.arguments:
                segment.name = segment.arguments.pop(0)
        return segments


def _span(segment: _Segment) -> tuple[int, int]:
    """Source range of a command with its redirections, heredoc bodies left out."""
    start, end = segment.start, segment.end
    for redirect in segment.redirects:
        start = min(start, redirect.start_byte)
        if redirect.type != "heredoc_redirect":
            end = max(end, redirect.end_byte)
            continue
        for child in redirect.children:
            if child.type in ("heredoc_start", "file_redirect", "herestring_redirect"):
                end = max(end, child.end_byte)
    return start, end
