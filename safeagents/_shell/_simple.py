"""One simple command: its words, redirections, wrappers, handler and ``exec`` effect."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tree_sitter import Node

from safeagents._actions import Effect
from safeagents._shell._dispatch import handler_for
from safeagents._shell._expand import unescape_unquoted
from safeagents._shell._model import (
    NO_INPUT,
    UNKNOWN_OUTPUT,
    Invocation,
    ShellState,
    Stream,
    Word,
)
from safeagents._shell._redirects import Prepared
from safeagents._shell._wrappers import unwrap

if TYPE_CHECKING:
    from safeagents._shell._walker import Walker

_SEPARATORS = frozenset((";", "&", "&&", "||", "|", "|&", ";;", "\n"))
_REDIRECTS = frozenset(("file_redirect", "heredoc_redirect", "herestring_redirect"))
_LINE_CONTINUATION = b"\\\n"


@dataclass(frozen=True, slots=True)
class _Lost:
    """Source text between tree nodes that is a word the grammar left out."""

    start_byte: int
    text: str

    @property
    def end_byte(self) -> int:
        return self.start_byte + len(self.text.encode())


@dataclass(slots=True)
class _Segment:
    """The parts of one simple command (tree-sitter may glue several into one node)."""

    start: int
    end: int
    assignments: list[Node] = field(default_factory=list)
    name: Node | None = None
    arguments: list[Node] = field(default_factory=list)
    redirects: list[Node] = field(default_factory=list)
    others: list[Node] = field(default_factory=list)


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
        output = UNKNOWN_OUTPUT
        for index, segment in enumerate(self._segments(node)):
            if index == 0:
                segment.redirects = (redirects or []) + segment.redirects
                output = self._segment(segment, state, depth, stdin)
            else:
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
        self.run.tick()
        if prepared is not None and prepared.stdin is not None:
            stdin = prepared.stdin
        argv = tuple(word.text for word in words)
        if not words:
            return UNKNOWN_OUTPUT
        if not words[0].exact or not words[0].text:
            self.run.emit(
                Effect("exec", argv0=words[0].text, argv=argv, command=command, opaque=True)
            )
            if prepared is not None:
                self.walker.redirections.emit_writes(prepared, None)
            return UNKNOWN_OUTPUT
        unwrapped = unwrap(words, state, stdin)
        invocation = Invocation(
            unwrapped.words,
            unwrapped.state,
            stdin,
            command,
            self.run,
            depth,
            self.walker,
            opaque=unwrapped.opaque,
        )
        mark = len(self.run.effects)
        if unwrapped.script is not None:
            self.walker.script(unwrapped.script, unwrapped.state, depth)
        handler = handler_for(invocation.name)
        output = handler(invocation) if handler is not None else None
        if invocation.opaque and stdin.origin == "pipe" and stdin.producer:
            command = f"{stdin.producer} | {command}"
        opaque = invocation.opaque or not all(word.exact for word in words)
        exec_effect = Effect(
            "exec", argv0=invocation.name, argv=argv, command=command, opaque=opaque
        )
        self.run.insert(mark, exec_effect)
        output = output or UNKNOWN_OUTPUT
        if prepared is not None:
            self.walker.redirections.emit_writes(prepared, output.text)
        return Stream(output.text, output.paths, "pipe", output.exact)

    def _segment(self, segment: _Segment, state: ShellState, depth: int, stdin: Stream) -> Stream:
        walker = self.walker
        for other in segment.others:
            walker.scan(other, state, depth + 1)
        if segment.name is None:
            for assignment in segment.assignments:
                walker.assign(assignment, state, depth)
            prepared = walker.redirections.prepare(segment.redirects, state, depth)
            for word in prepared.extra_words:
                walker.scan(word, state, depth + 1)
            walker.redirections.emit_writes(prepared, "" if prepared.targets else None)
            return walker.continuations(prepared.continuations, UNKNOWN_OUTPUT, state, depth)
        if segment.assignments and self._newline_before(segment.assignments[-1], segment.name):
            for assignment in segment.assignments:
                walker.assign(assignment, state, depth)
        else:
            for assignment in segment.assignments:
                walker.scan(assignment, state, depth + 1)
        prepared = walker.redirections.prepare(segment.redirects, state, depth)
        nodes: list[Node | _Lost] = [segment.name, *segment.arguments, *prepared.extra_words]
        nodes.extend(self._lost_words(segment, nodes))
        nodes.sort(key=lambda node: node.start_byte)
        words = self._resolve(nodes, state, depth)
        start, end = _span(segment)
        command = walker.source[start:end].decode("utf-8", "replace").strip()
        output = self.run_words(words, state, depth, stdin, prepared, command)
        return walker.continuations(prepared.continuations, output, state, depth)

    def _resolve(self, nodes: list[Node | _Lost], state: ShellState, depth: int) -> list[Word]:
        """Resolve word nodes, joining those split by a backslash-newline (``r\\⏎m``)."""
        resolver = self.walker.resolver
        source = self.walker.source
        words: list[Word] = []
        previous: Node | _Lost | None = None
        for node in nodes:
            if isinstance(node, _Lost):
                resolved = [Word(unescape_unquoted(node.text))]
            else:
                resolved = resolver.resolve(node, state, depth + 1)
            glued = previous is not None and source[previous.end_byte : node.start_byte] == (
                _LINE_CONTINUATION
            )
            if glued and words and resolved:
                head = words.pop()
                first = resolved[0]
                resolved[0] = Word(
                    head.text + first.text,
                    head.exact and first.exact,
                    head.process_substitution or first.process_substitution,
                )
            words.extend(resolved)
            previous = node
        return words

    def _lost_words(self, segment: _Segment, words: list[Node | _Lost]) -> list[_Lost]:
        """Words the grammar dropped from the tree (the ``-`` of ``python - <<EOF``)."""
        if segment.name is None:
            return []
        source = self.walker.source
        covered = sorted(
            (node.start_byte, node.end_byte)
            for node in [*words, *segment.redirects, *segment.others]
            if isinstance(node, Node) and node.end_byte > segment.name.start_byte
        )
        lost: list[_Lost] = []
        cursor = segment.name.start_byte
        for start, end in covered:
            if start > cursor:
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
        segments = [_Segment(node.start_byte, node.end_byte)]
        for index, child in enumerate(node.children):
            current = segments[-1]
            field_name = node.field_name_for_child(index)
            kind = child.type
            if kind == "ERROR" and self.walker.text(child).strip() in _SEPARATORS:
                current.end = child.start_byte
                segments.append(_Segment(child.end_byte, node.end_byte))
            elif kind == "variable_assignment" and current.name is None:
                current.assignments.append(child)
            elif field_name == "name" or (kind == "command_name" and current.name is None):
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
