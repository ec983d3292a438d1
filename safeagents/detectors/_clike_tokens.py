"""A token reader for C-like languages without a grammar here (Go, Java, C#, Kotlin, Rust,
C, C++, Swift, Scala, Dart): strings, numbers, names and operators, comments skipped, each
with its line. Enough to find literals and the brackets around them, not to parse."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Token", "closing", "literal_at", "tokens_of"]

_TOKEN = re.compile(
    r"""(?P<skip>\s+|//[^\n]*|/\*[\s\S]*?\*/)
    |(?P<str>"(?:\\.|[^"\\\n])*"|`[^`]*`|'(?:\\.|[^'\\\n]){1,4}')
    |(?P<num>\d[\w.]*)
    |(?P<id>[A-Za-z_$][\w$]*)
    |(?P<op>==|!=|&&|\|\||->|=>|::|<=|>=|.)""",
    re.VERBOSE,
)
_INTEGER_SUFFIX = re.compile(
    r"((?:0[xX][0-9a-fA-F_]+|\d[\d_]*))(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU]|[iu](?:8|16|32|64|128|size))$"
)
_LITERAL_WORDS = frozenset({"true", "false"})
_MAX_TOKENS = 100_000
_PAIRS = {"(": ")", "{": "}", "[": "]"}


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    line: int


def tokens_of(source: str) -> list[Token]:
    """The tokens of ``source`` (at most :data:`_MAX_TOKENS`)."""
    tokens: list[Token] = []
    line = 0
    for match in _TOKEN.finditer(source):
        kind = match.lastgroup or "op"
        text = match.group()
        if kind != "skip":
            tokens.append(Token(kind, text, line))
            if len(tokens) >= _MAX_TOKENS:
                break
        line += text.count("\n")
    return tokens


def literal_at(tokens: list[Token], index: int) -> tuple[str, int] | None:
    """The literal at ``index`` (a string's text, a number as written, ``-`` a number) and
    the index after it."""
    if index >= len(tokens):
        return None
    token = tokens[index]
    if token.kind == "str":
        return token.text[1:-1], index + 1
    if token.kind == "num":
        return _unsuffixed(token.text), index + 1
    if token.kind == "id" and token.text in _LITERAL_WORDS:
        return token.text, index + 1
    if token.text == "-" and index + 1 < len(tokens) and tokens[index + 1].kind == "num":
        return "-" + _unsuffixed(tokens[index + 1].text), index + 2
    return None


def _unsuffixed(number: str) -> str:
    """An integer without its type's suffix, as a test may spell it: ``59_500L`` (Java,
    Kotlin, C), ``10u`` (C), ``7u64``, ``3usize`` (Rust)."""
    found = _INTEGER_SUFFIX.match(number)
    return number if found is None else found.group(1)


def closing(tokens: list[Token], index: int) -> int | None:
    """The index of the bracket closing the one at ``index``."""
    opening = tokens[index].text
    closer = _PAIRS.get(opening)
    if closer is None:
        return None
    depth = 0
    for position in range(index, len(tokens)):
        token = tokens[position]
        if token.kind != "op":
            continue
        if token.text == opening:
            depth += 1
        elif token.text == closer:
            depth -= 1
            if depth == 0:
                return position
    return None
