"""Splits long scripts into top-level pieces so that parsing stays fast.

tree-sitter's error recovery is quadratic on some malformed input (``a | a | … |`` of 30 KB
takes seconds), so no text longer than :data:`PARSE_LIMIT` bytes of code reaches the parser
in one piece. Pieces end at newlines and ``;``/``&&``/``||``/``&``/``|`` outside quotes,
substitutions and heredocs, found by a light linear scan. Heredoc bodies and quoted strings
without substitutions are not code, so a large ``cat > f <<EOF`` still parses whole.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import NamedTuple

PARSE_LIMIT = 4_096
"""Most bytes of code tree-sitter parses at once (worst case about 50 ms)."""

_INTERESTING = re.compile(rb"[\\'\"`$()\n;&|<#]")
_COMPLEX = re.compile(rb"[\\'\"`$()<#]")
_SEPARATOR = re.compile(rb"&&|\|\||;;|\|&|&>|\n(?:[ \t\n]*\n)?|[;&|]")
_DOUBLE_QUOTED = re.compile(rb'"(?:[^"\\]|\\.)*"?', re.DOTALL)
_BACKTICKED = re.compile(rb"`(?:[^`\\]|\\.)*`?", re.DOTALL)
_HEREDOC = re.compile(rb"<<(-?)[ \t]*(\\?)(['\"]?)([^\s'\"<>|&;()]+)\3")
_EXPANSION = re.compile(rb"[$`]")
_DELIMITER_END = frozenset(bytes([byte]) for byte in b" \t\n;&|<>()")
_WORD_START = frozenset(b" \t\n;&|()")
_FILLER = 0x01
"""A control byte: never whitespace to the grammar and never part of a heredoc delimiter."""
_MASK = bytes(0x0A if byte == 0x0A else _FILLER for byte in range(256))
"""Maps every byte but a newline to :data:`_FILLER`."""


class _Heredoc(NamedTuple):
    delimiter: bytes
    strip_tabs: bool
    quoted: bool
    simple: bool
    """The delimiter word is exactly what the pattern read (no ``"E"OF``, ``E\\OF``, ``$x``), so
    the body ends where bash ends it and may be treated as data."""


@dataclass(frozen=True, slots=True)
class Piece:
    start: int
    end: int
    parseable: bool
    """False when the piece holds more code than :data:`PARSE_LIMIT` and cannot be split."""
    text_spans: tuple[tuple[int, int], ...] = ()
    """Data ranges (relative to ``start``) to blank out before parsing a long piece."""
    closing: bytes = b""
    """Appended before parsing: the delimiter line of a heredoc that runs to the end of the
    script. bash reads such a body to the end as data; tree-sitter would report an error."""


@dataclass(frozen=True, slots=True)
class Plan:
    pieces: list[Piece]
    lossy: bool
    """A piece boundary falls on a pipe, so the analysis of data flow is incomplete."""


@dataclass
class _Scan:
    splits: list[tuple[int, bool]]
    """Positions after a top-level separator, and whether the separator is a pipe."""
    text_spans: list[tuple[int, int]]
    """Ranges that are data, not code (single-quoted strings, literal heredoc bodies)."""
    closing: bytes = b""
    """The delimiter line that would end a heredoc left open at the end of the script."""


def plan(source: bytes) -> Plan:
    if len(source) <= PARSE_LIMIT:
        return Plan([Piece(0, len(source), True)], False)
    scan = _scan(source)
    pieces: list[Piece] = []
    lossy = False
    start = 0
    splits = scan.splits
    positions = [position for position, _ in splits]
    span_starts = [a for a, _ in scan.text_spans]
    while start < len(source):
        index = bisect_right(positions, start)
        probe = bisect_right(positions, start + PARSE_LIMIT) - 1
        if probe >= index:
            end, at_pipe = splits[probe]
        elif index < len(splits):
            end, at_pipe = splits[index]
        else:
            end, at_pipe = len(source), False
        lossy = lossy or (at_pipe and end < len(source))
        spans = _inside(scan.text_spans, span_starts, start, end)
        code = end - start - sum(b - a for a, b in spans)
        closing = scan.closing if end == len(source) else b""
        pieces.append(Piece(start, end, code <= PARSE_LIMIT, spans, closing))
        start = end
    return Plan(pieces, lossy)


def _inside(
    spans: list[tuple[int, int]], starts: list[int], start: int, end: int
) -> tuple[tuple[int, int], ...]:
    first = bisect_left(starts, start)
    last = bisect_left(starts, end)
    return tuple((a - start, b - start) for a, b in spans[first:last] if b <= end)


def masked(source: bytes, spans: tuple[tuple[int, int], ...]) -> bytes:
    """``source`` with the data in ``spans`` overwritten (newlines kept): it parses linearly.

    Node offsets are unchanged, so the walker still reads the real text from the original.
    """
    if not spans:
        return source
    buffer = bytearray(source)
    for start, end in spans:
        inner = slice(start + 1, end - 1)
        buffer[inner] = buffer[inner].translate(_MASK)
    return bytes(buffer)


def _scan(source: bytes) -> _Scan:
    scan = _Scan([], [])
    length = len(source)
    depth = 0
    pending: list[_Heredoc] = []
    position = 0
    splits = scan.splits
    while position < length:
        if depth == 0 and not pending:
            # Plain code up to the next quote, substitution, comment or redirection: its
            # separators in one pass (1 MB of `echo x; ` stays cheap).
            complex_char = _COMPLEX.search(source, position)
            limit = length if complex_char is None else complex_char.start()
            if limit > position:
                _plain_splits(source, position, limit, splits)
                position = limit
                if complex_char is None:
                    break
        match = _INTERESTING.search(source, position)
        if match is None:
            break
        at = match.start()
        char = source[at : at + 1]
        position = at + 1
        if char == b"\\":
            position = at + 2
        elif char == b"'":
            close = source.find(b"'", at + 1)
            position = length if close < 0 else close + 1
            if close >= 0:
                scan.text_spans.append((at, position))
        elif char == b'"':
            position = _skip(_DOUBLE_QUOTED, source, at, scan)
        elif char == b"`":
            position = _skip(_BACKTICKED, source, at, None)
        elif char == b"(" or (char == b"$" and source[at + 1 : at + 2] == b"("):
            depth += 1
            position = at + (2 if char == b"$" else 1)
        elif char == b")":
            depth = max(0, depth - 1)
        elif char == b"#" and (at == 0 or source[at - 1] in _WORD_START):
            newline = source.find(b"\n", at)
            position = length if newline < 0 else newline
        elif char == b"<":
            position = _heredoc_operator(source, at, pending)
        elif char == b"\n":
            if pending:
                position = _heredoc_bodies(source, position, pending, scan)
                pending = []
            if depth == 0:
                scan.splits.append((position, False))
        elif depth == 0 and char in (b";", b"&", b"|"):
            pair = source[at : at + 2]
            if pair in (b"&&", b"||", b";;", b"|&", b"&>"):
                position = at + 2
            if pair != b"&>" and source[at - 1 : at] not in (b">", b"<"):
                scan.splits.append((position, char == b"|" and pair != b"||"))
    return scan


def _plain_splits(source: bytes, start: int, end: int, splits: list[tuple[int, bool]]) -> None:
    """The splits of plain code (no quotes, substitutions, comments or ``<``) in one pass.

    A run of blank lines gives a split after its first and after its last newline only."""
    for found in _SEPARATOR.finditer(source, start, end):
        at, after = found.span()
        separator = source[at:after]
        if separator[0] == 0x0A:
            splits.append((at + 1, False))
            if after > at + 1:
                splits.append((after, False))
        elif separator != b"&>" and source[at - 1 : at] not in (b">", b"<"):
            splits.append((after, separator in (b"|", b"|&")))


def _skip(pattern: re.Pattern[bytes], source: bytes, at: int, scan: _Scan | None) -> int:
    match = pattern.match(source, at)
    end = match.end() if match is not None else len(source)
    closed = end - at >= 2 and source[end - 1 : end] == source[at : at + 1]
    if scan is not None and closed and not _EXPANSION.search(source, at, end):
        scan.text_spans.append((at, end))
    return end


def _heredoc_operator(source: bytes, at: int, pending: list[_Heredoc]) -> int:
    if source[at : at + 3] == b"<<<":
        return at + 3
    match = _HEREDOC.match(source, at)
    if match is None:
        return at + 1
    quoted = bool(match.group(2) or match.group(3))
    after = source[match.end() : match.end() + 1]
    simple = (not after or after in _DELIMITER_END) and not _EXPANSION.search(match.group(4))
    simple = simple and b"\\" not in match.group(4)
    pending.append(_Heredoc(match.group(4), bool(match.group(1)), quoted, simple))
    return match.end()


def _heredoc_bodies(source: bytes, position: int, pending: list[_Heredoc], scan: _Scan) -> int:
    """Skip the bodies of the heredocs opened on the line that just ended."""
    for delimiter, strip_tabs, quoted, simple in pending:
        body_start = position
        closing = (rb"\t*" if strip_tabs else b"") + re.escape(delimiter) + rb"(?=\n|\Z)"
        found = re.compile(closing).match(source, position) if position < len(source) else None
        if found is not None:
            body_end = position
        else:
            found = re.compile(b"\n" + closing).search(source, position)
            if found is None:  # bash reads to the end of the script: all of it is data
                if simple:
                    scan.closing = b"\n" + delimiter + b"\n"
                if simple and (quoted or not _EXPANSION.search(source, body_start)):
                    scan.text_spans.append((body_start - 1, len(source)))
                return len(source)
            body_end = found.start() + 1
        position = min(found.end() + 1, len(source))
        plain = quoted or not _EXPANSION.search(source, body_start, body_end)
        if simple and plain and body_end - body_start > 2:
            scan.text_spans.append((body_start - 1, body_end + 1))
    return position
