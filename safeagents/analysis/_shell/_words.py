"""Shell words to text: quotes, escapes, known variables, ``~`` and brace expansion."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Protocol

from tree_sitter import Node

from safeagents.analysis._shell._expand import (
    apply_operation,
    brace_expand,
    decode_ansi_c,
    escape_for_braces,
    unescape_double_quoted,
)
from safeagents.analysis._shell._model import Run, ShellState, Word

_NUMERIC_SPECIALS = frozenset("?$!#-")
_VARIABLE_NODES = frozenset(("variable_name", "special_variable_name"))
_LITERAL_LEAVES = frozenset(("word", "number", "extglob_pattern", "$", "brace_expression"))
_INTERPOLATED = frozenset(
    ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion")
)


class Substitutions(Protocol):
    """The walker side: analyses commands nested in words."""

    def substitution(self, node: Node, state: ShellState, depth: int) -> None:
        """Analyse the commands of ``$(…)``, backticks or ``<(…)``."""

    def scan(self, node: Node, state: ShellState, depth: int) -> None:
        """Analyse any substitution found below ``node``."""


@dataclass
class _Accumulator:
    """A word being built: its text and its brace-expansion form (quoted parts escaped)."""

    plain: list[str] = field(default_factory=list)
    braced: list[str] = field(default_factory=list)
    exact: bool = True
    process_substitution: bool = False
    expandable: bool = False
    breaks: list[int] = field(default_factory=list)
    """Positions in ``plain``/``braced`` where field splitting ends a word (``a${IFS}b``)."""

    def quoted(self, text: str) -> None:
        self.plain.append(text)
        self.braced.append(escape_for_braces(text))

    def unquoted(self, text: str) -> None:
        """Append unquoted source text, applying quote removal."""
        if "\\" not in text:
            self.expandable = self.expandable or "{" in text
            self.plain.append(text)
            self.braced.append(text)
            return
        index = 0
        while index < len(text):
            char = text[index]
            if char == "\\" and index + 1 < len(text):
                escaped = text[index + 1]
                if escaped != "\n":
                    self.plain.append(escaped)
                    self.braced.append(escape_for_braces(escaped))
                index += 2
                continue
            if char == "{":
                self.expandable = True
            self.plain.append(char)
            self.braced.append(char)
            index += 1

    def raw(self, text: str, *, exact: bool) -> None:
        self.quoted(text)
        self.exact = self.exact and exact

    def split(self, value: str, separators: str) -> None:
        """Append an unquoted expansion's ``value``, split into fields at ``separators``."""
        for index, piece in enumerate(_split_fields(value, separators)):
            if index:
                self.breaks.append(len(self.plain))
            if piece:
                self.quoted(piece)

    def words(self) -> list[Word]:
        if not self.breaks:
            return self._expanded(self.plain, self.braced)
        words: list[Word] = []
        bounds = [0, *self.breaks, len(self.plain)]
        for start, end in pairwise(bounds):
            if end > start:
                words.extend(self._expanded(self.plain[start:end], self.braced[start:end]))
        return words

    def _expanded(self, plain: list[str], braced: list[str]) -> list[Word]:
        if not self.expandable:
            return [Word("".join(plain), self.exact, self.process_substitution)]
        return [
            Word(text, self.exact, self.process_substitution)
            for text in brace_expand("".join(braced))
        ]


def _split_fields(value: str, separators: str) -> list[str]:
    """``value`` cut at runs of ``separators``: a leading or trailing run still ends a field."""
    if not separators or not any(char in separators for char in value):
        return [value]
    pieces: list[str] = []
    current: list[str] = []
    previous_separator = False
    for char in value:
        if char in separators:
            if not previous_separator:
                pieces.append("".join(current))
                current = []
            previous_separator = True
        else:
            current.append(char)
            previous_separator = False
    pieces.append("".join(current))
    return pieces


class WordResolver:
    """Resolves word nodes of one parsed script."""

    def __init__(
        self, source: bytes, run: Run, walker: Substitutions, ascii_text: str | None = None
    ) -> None:
        self.source = source
        self.run = run
        self.walker = walker
        self.ascii_text = ascii_text
        """The script itself when it is ASCII: byte offsets are then character offsets."""

    def text(self, node: Node) -> str:
        if self.ascii_text is not None:
            return self.ascii_text[node.start_byte : node.end_byte]
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def span_text(self, start: int, end: int) -> str:
        """The script text between two byte offsets."""
        if self.ascii_text is not None:
            return self.ascii_text[start:end]
        return self.source[start:end].decode("utf-8", "replace")

    def resolve(self, node: Node, state: ShellState, depth: int) -> list[Word]:
        """The words ``node`` expands to (several after brace expansion)."""
        kind = node.type
        run = self.run
        if kind == "command_name" and node.child_count == 1:
            run.tick()
            node = node.children[0]
            kind = node.type
            depth += 1
        if kind == "word" or kind == "raw_string" or kind == "number":
            ascii_text = self.ascii_text
            if ascii_text is not None:
                text = ascii_text[node.start_byte : node.end_byte]
            else:
                text = self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")
            if kind == "raw_string":
                run.tick()
                return [Word(text[1:-1])]
            if "\\" not in text and "{" not in text and text[:1] != "~":
                run.tick()
                return [Word(text)]
        accumulator = _Accumulator()
        self._append(node, accumulator, state, depth, first=True)
        return accumulator.words()

    def resolve_joined(self, node: Node, state: ShellState, depth: int) -> Word:
        """``node`` as one word, as in an assignment value or a redirection target."""
        words = self.resolve(node, state, depth)
        if len(words) == 1:
            return words[0]
        return Word(" ".join(word.text for word in words), all(word.exact for word in words))

    def heredoc_body(self, node: Node, state: ShellState, depth: int) -> tuple[str, bool]:
        """Text of an unquoted-delimiter heredoc body with what is known expanded."""
        accumulator = _Accumulator()
        cursor = node.start_byte
        for child in node.children:
            self._gap(cursor, child.start_byte, accumulator, heredoc=True)
            if child.type == "heredoc_content":
                self._gap(child.start_byte, child.end_byte, accumulator, heredoc=True)
            else:
                self._interpolated(child, accumulator, state, depth)
            cursor = child.end_byte
        self._gap(cursor, node.end_byte, accumulator, heredoc=True)
        text = "".join(accumulator.plain)
        return text, accumulator.exact and "`" not in text

    def _append(
        self, node: Node, out: _Accumulator, state: ShellState, depth: int, *, first: bool = False
    ) -> None:
        self.run.tick()
        kind = node.type
        if kind in _LITERAL_LEAVES:
            self._literal(self.text(node), out, state, first=first)
        elif kind == "raw_string":
            out.quoted(self.text(node)[1:-1])
        elif kind in ("string", "translated_string"):
            self._string(node, out, state, depth)
        elif kind == "ansi_c_string":
            out.quoted(decode_ansi_c(self.text(node)[2:-1]))
        elif kind in ("concatenation", "command_name"):
            for index, child in enumerate(node.children):
                self._append(child, out, state, depth + 1, first=first and index == 0)
        elif kind in _INTERPOLATED or kind == "process_substitution":
            self._interpolated(node, out, state, depth, split=True)
        else:
            self.walker.scan(node, state, depth + 1)
            out.raw(self.text(node), exact=False)

    def _literal(self, text: str, out: _Accumulator, state: ShellState, *, first: bool) -> None:
        if first and (text == "~" or text.startswith("~/")):
            out.quoted(state.ctx.home)
            text = text[1:]
        out.unquoted(text)

    def _string(self, node: Node, out: _Accumulator, state: ShellState, depth: int) -> None:
        children = node.children
        start = node.start_byte + 1
        end = node.end_byte - 1 if children and children[-1].type == '"' else node.end_byte
        cursor = start
        for child in children:
            if child.type == '"' or child.end_byte <= start:
                continue
            self._gap(cursor, child.start_byte, out, heredoc=False)
            if child.type == "string_content":
                self._gap(child.start_byte, child.end_byte, out, heredoc=False)
            else:
                self._interpolated(child, out, state, depth)
            cursor = child.end_byte
        self._gap(cursor, end, out, heredoc=False)

    def _gap(self, start: int, end: int, out: _Accumulator, *, heredoc: bool) -> None:
        if end > start:
            raw = self.source[start:end].decode("utf-8", "replace")
            out.quoted(unescape_double_quoted(raw, heredoc=heredoc))

    def _interpolated(
        self, node: Node, out: _Accumulator, state: ShellState, depth: int, *, split: bool = False
    ) -> None:
        """A ``$…`` form inside or outside quotes; leading blanks in its range are literal.

        ``split``: the form is unquoted, so a known value is split into fields at ``$IFS``."""
        self.run.tick()
        raw = self.text(node)
        stripped = raw.lstrip(" \t\n")
        if len(stripped) != len(raw):
            out.quoted(raw[: len(raw) - len(stripped)])
        kind = node.type
        if kind == "$":
            out.quoted(stripped)
        elif kind == "simple_expansion":
            self._variable(_variable_name(node, self), stripped, out, state, split)
        elif kind == "expansion":
            named = [child for child in node.children if child.is_named]
            if len(named) == 1 and named[0].type in _VARIABLE_NODES:
                self._variable(self.text(named[0]), stripped, out, state, split)
            elif (value := self._operation(node, state)) is not None:
                self.run.charge_expansion(len(value))
                self._value(value, out, state, split)
            else:
                self.walker.scan(node, state, depth + 1)
                out.raw(stripped, exact=stripped.startswith("${#"))
        elif kind in ("command_substitution", "process_substitution"):
            self.walker.substitution(node, state, depth + 1)
            if kind == "process_substitution":
                out.process_substitution = True
                out.raw(stripped, exact=True)
            else:
                out.raw(stripped, exact=False)
        elif kind == "arithmetic_expansion":
            self.walker.scan(node, state, depth + 1)
            out.raw(stripped, exact=True)
        else:
            self.walker.scan(node, state, depth + 1)
            out.raw(stripped, exact=False)

    def _variable(
        self, name: str | None, raw: str, out: _Accumulator, state: ShellState, split: bool
    ) -> None:
        if name is None:
            out.raw(raw, exact=False)
            return
        value = state.lookup(name)
        if value is not None:
            self.run.charge_expansion(len(value))
            self._value(value, out, state, split)
        else:
            out.raw(raw, exact=name in _NUMERIC_SPECIALS)

    def _value(self, value: str, out: _Accumulator, state: ShellState, split: bool) -> None:
        if split:
            out.split(value, state.lookup("IFS") or "")
        else:
            out.quoted(value)

    def _operation(self, node: Node, state: ShellState) -> str | None:
        """``${NAME<op>…}`` of a known variable with literal operands, else ``None``."""
        children = node.children
        if len(children) < 4 or children[1].type != "variable_name" or children[-1].type != "}":
            return None
        value = state.lookup(self.text(children[1]))
        parts: list[str] = []
        for child in children[2:-1]:
            if child.type not in _OPERAND_NODES and child.is_named:
                return None
            parts.append(self.text(child))
        return apply_operation(value, parts)


_OPERAND_NODES = frozenset(("word", "regex", "number"))


def _variable_name(node: Node, resolver: WordResolver) -> str | None:
    for child in node.children:
        if child.type in _VARIABLE_NODES:
            return resolver.text(child)
    return None
