"""Text-level expansions: backslash escapes, ``$'…'`` strings and brace expansion."""

from __future__ import annotations

import fnmatch
import re
from itertools import islice, pairwise

from safeagents.analysis._shell._model import MAX_EXPANSIONS, BudgetExhausted

_ANSI_C_ESCAPE = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL
)
_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_DOUBLE_QUOTE_ESCAPABLE = frozenset('$`"\\')
_HEREDOC_ESCAPABLE = frozenset("$`\\")
BRACE_SPECIALS = frozenset("{},\\")
_BRACE_ESCAPES = {ord(char): "\\" + char for char in BRACE_SPECIALS}
_MAX_BRACE_GROUPS = 16
_SEQUENCE = re.compile(
    r"(-?\d{1,18})\.\.(-?\d{1,18})(?:\.\.(-?\d{1,18}))?|([A-Za-z])\.\.([A-Za-z])"
)


def unescape_unquoted(text: str) -> str:
    """Quote removal for an unquoted word: ``\\x`` is ``x``, backslash-newline vanishes."""
    if "\\" not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            if text[index + 1] != "\n":
                out.append(text[index + 1])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def unescape_double_quoted(text: str, *, heredoc: bool = False) -> str:
    """Quote removal inside ``"…"`` (or an unquoted heredoc body)."""
    if "\\" not in text:
        return text
    escapable = _HEREDOC_ESCAPABLE if heredoc else _DOUBLE_QUOTE_ESCAPABLE
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            if following == "\n":
                index += 2
                continue
            if following in escapable:
                out.append(following)
                index += 2
                continue
        out.append(char)
        index += 1
    return "".join(out)


def decode_ansi_c(body: str) -> str:
    """The value of ``$'body'``."""

    def replace(match: re.Match[str]) -> str:
        code = match.group(1)
        head = code[0]
        try:
            if head in "xuU" and len(code) > 1:
                return chr(int(code[1:], 16))
            if head.isdigit() and head in "01234567":
                return chr(int(code, 8) & 0xFF)
            if head == "c" and len(code) == 2:
                return chr(ord(code[1]) & 0x1F)
        except (ValueError, OverflowError):
            return match.group(0)
        return _SIMPLE_ESCAPES.get(code, "\\" + code)

    return _ANSI_C_ESCAPE.sub(replace, body)


def escape_for_braces(text: str) -> str:
    """Protect quoted characters from brace expansion."""
    return text.translate(_BRACE_ESCAPES)


def brace_expand(pattern: str) -> list[str]:
    """Bash brace expansion of ``pattern`` (escaped with :func:`escape_for_braces`).

    Raises :class:`BudgetExhausted` past :data:`MAX_EXPANSIONS` words or brace groups."""
    if pattern.count("{") > _MAX_BRACE_GROUPS and _first_brace_group(pattern) is not None:
        raise BudgetExhausted
    results = [_unescape_braces(item) for item in _expand(pattern, MAX_EXPANSIONS + 1)]
    if len(results) > MAX_EXPANSIONS:
        raise BudgetExhausted
    return results or [_unescape_braces(pattern)]


def _expand(pattern: str, limit: int) -> list[str]:
    found = _first_brace_group(pattern)
    if found is None:
        return [pattern]
    start, end, alternatives = found
    prefix, suffix = pattern[:start], pattern[end + 1 :]
    results: list[str] = []
    for alternative in alternatives:
        for tail in _expand(alternative + suffix, limit - len(results)):
            results.append(prefix + tail)
            if len(results) >= limit:
                return results
    return results


def _first_brace_group(pattern: str) -> tuple[int, int, list[str]] | None:
    """The first ``{a,b}`` or ``{1..3}`` group: its bounds and alternatives."""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            group = _group_at(pattern, index)
            if group is not None:
                return group
        index += 1
    return None


def _group_at(pattern: str, start: int) -> tuple[int, int, list[str]] | None:
    depth = 0
    commas: list[int] = []
    index = start
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return _alternatives(pattern, start, index, commas)
        elif char == "," and depth == 1:
            commas.append(index)
        index += 1
    return None


def _alternatives(
    pattern: str, start: int, end: int, commas: list[int]
) -> tuple[int, int, list[str]] | None:
    if commas:
        bounds = [start, *commas, end]
        return start, end, [pattern[a + 1 : b] for a, b in pairwise(bounds)]
    sequence = _sequence(pattern[start + 1 : end])
    return (start, end, sequence) if sequence else None


def _sequence(body: str) -> list[str]:
    match = _SEQUENCE.fullmatch(body)
    if match is None:
        return []
    if match.group(4):
        first, last = ord(match.group(4)), ord(match.group(5))
        step = 1 if last >= first else -1
        return [chr(code) for code in range(first, last + step, step)]
    first, last = int(match.group(1)), int(match.group(2))
    step = abs(int(match.group(3) or 1)) or 1
    step = step if last >= first else -step
    values = range(first, last + (1 if step > 0 else -1), step)
    return [str(value) for value in islice(values, MAX_EXPANSIONS + 1)]


def _unescape_braces(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        if text[index] == "\\" and index + 1 < len(text):
            out.append(text[index + 1])
            index += 2
            continue
        out.append(text[index])
        index += 1
    return "".join(out)


_OPERATION_LIMIT = 4_096
"""Longest value a ``${NAME#pattern}``-style operation is worked out for (it is quadratic)."""


def apply_operation(value: str | None, parts: list[str]) -> str | None:
    """``${NAME<parts>}``: defaults, prefix/suffix removal, substrings and replacement with
    literal operands (``${IFS%?}``, ``${X:0:2}``, ``${X//a/b}``); ``None`` for other forms.

    ``value`` is ``None`` for a variable the script never set: a default (``${X:-rm}``) is
    then taken as what runs, the likely case and the one an evasion relies on."""
    if not parts:
        return None
    operator, operands = parts[0], parts[1:]
    operand = "".join(operands)
    if value is None:
        return operand if operator in (":-", ":=", "-", "=") else None
    if len(value) > _OPERATION_LIMIT:
        return None
    if operator in (":-", ":="):
        return value or operand
    if operator in ("-", "=", ":?", "?"):
        return value
    if operator in (":+", "+"):
        return operand if value or operator == "+" else ""
    if operator in ("#", "##", "%", "%%"):
        return _strip(value, operand, longest=len(operator) == 2, prefix=operator[0] == "#")
    if operator == ":":
        return _substring(value, operands)
    if operator in ("/", "//"):
        pattern, _, replacement = operand.partition("/")
        if len(operands) > 1 and operands[1] == "/":
            pattern, replacement = operands[0], "".join(operands[2:])
        return _replace(value, pattern, replacement, every=operator == "//")
    return None


def _glob(pattern: str) -> re.Pattern[str] | None:
    if pattern.startswith(("#", "%")) or "\\" in pattern:
        return None
    translated = fnmatch.translate(pattern)
    try:
        return re.compile(translated, re.DOTALL)
    except re.error:
        return None


def _strip(value: str, pattern: str, *, longest: bool, prefix: bool) -> str | None:
    compiled = _glob(pattern)
    if compiled is None:
        return None
    sizes = range(len(value), -1, -1) if longest else range(len(value) + 1)
    for size in sizes:
        piece = value[:size] if prefix else value[len(value) - size :]
        if compiled.fullmatch(piece):
            return value[size:] if prefix else value[: len(value) - size]
    return value


def _substring(value: str, operands: list[str]) -> str | None:
    numbers = [item for item in operands if item != ":"]
    try:
        values = [int(item.strip()) for item in numbers]
    except ValueError:
        return None
    if not values or len(values) > 2:
        return None
    start = values[0] if values[0] >= 0 else max(0, len(value) + values[0])
    if len(values) == 1:
        return value[start:]
    length = values[1]
    end = start + length if length >= 0 else len(value) + length
    return value[start:end] if end >= start else None


def _replace(value: str, pattern: str, replacement: str, *, every: bool) -> str | None:
    if not pattern or _glob(pattern) is None:
        return None
    if not any(char in pattern for char in "*?["):
        return value.replace(pattern, replacement, -1 if every else 1)
    return None
