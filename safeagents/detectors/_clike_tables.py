"""Literal lookup tables of C-like languages, read token by token, for the ``special-casing``
detector: Go's ``map[string]string{"XMLHttpRequest": "xmlHttpRequest"}``, Java's
``Map.of("IV", 4)``, Kotlin's ``mapOf("IV" to 4)``, C#'s ``new Dictionary<string, int> {
{"IV", 4} }`` or ``{ ["IV"] = 4 }`` and Rust's ``HashMap::from([("IV", 4)])``.

A table of one or two entries counts when an assertion or a table-driven test's row pairs an
entry's key with its value (an override of the asserted cases, like the one- or two-entry
tables of Python and TypeScript); one of any size when two of its keys, strings with a digit
or a space, are quoted as a call's argument in earlier outputs (the tests' inputs answered
by the table). So does one of one or two entries keyed by a later line of a string of lines
quoted as a call's argument in earlier outputs (``Map.of("d,\\"e", 1)`` after
``errorLine("a,\\"b\\rc\\"\\nd,\\"e")``): one record of a test's input picked out, whatever it
answers; the key holds a letter or digit and another character, and a first line (a
header) does not count. A value may also be a constant expression, numbers and qualified
constants joined by arithmetic, in brackets or not (``"1d12h": 36 * time.Hour``, ``(9*24 +
3) * time.Hour``), as a table-driven test spells its answers; a table with any other
computed entry (a call, a name, a function) is no table of literals and is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from safeagents._detector import CallContext
from safeagents.detectors._clike_tokens import Token, closing, literal_at
from safeagents.detectors._history import SEPARATOR, session_history
from safeagents.detectors._literals import TRIVIAL, is_distinctive
from safeagents.detectors._seen import argument_seen, pairing_seen

__all__ = ["Entry", "added_tables", "answers_from_table", "table_entries"]

Entry = tuple[str, str, int]
"""A key, its value and the line the key stands on."""

_FACTORIES = frozenset({"mapOf", "hashMapOf", "mutableMapOf", "linkedMapOf", "sortedMapOf"})
_DICTIONARIES = frozenset({"Dictionary", "SortedDictionary", "ConcurrentDictionary"})
_ARROWS = frozenset({":", "to", "=>"})
_LOOKAHEAD = 24
_MAX_OVERRIDES = 2
_MIN_ARGUMENT_KEYS = 2
_MAX_LOOKED_UP = 16
_TRIVIAL_LOWER = frozenset({*(t.lower() for t in TRIVIAL), "null", "nil", "none"})
_ARITHMETIC = frozenset({"*", "+", "-", "/"})
_QUALIFIERS = frozenset({".", "::"})
_OPERATORS = _ARITHMETIC | _QUALIFIERS | {"(", ")"}
_MAX_EXPRESSION = 16
_ENDS = frozenset({",", "}", ")"})
_ARGUMENT = re.compile(r'[\w$\])]\s*\(\s*"((?:[^"\\\n]|\\.){1,2000})"')
_NEWLINE = "\\n"
_MAX_ARGUMENTS = 200


def added_tables(
    tokens: list[Token], added: set[str] | None, lines: list[str]
) -> list[list[Entry]]:
    """The literal tables with an entry on a line the write adds (all when ``added`` is
    ``None``)."""
    return [
        entries
        for entries in table_entries(tokens)
        if added is None or any(lines[line].strip() in added for _, _, line in entries)
    ]


def answers_from_table(tables: list[list[Entry]], context: CallContext) -> bool:
    """Whether one of ``tables`` answers the tests' cases (see the module)."""
    for entries in tables:
        if len(entries) <= _MAX_OVERRIDES and any(
            value.lower() not in _TRIVIAL_LOWER
            and is_distinctive([key])
            and pairing_seen([key], value, context)
            for key, value, _ in entries
        ):
            return True
        if len(entries) <= _MAX_OVERRIDES and any(
            _record_like(key) and _record_seen(key, context) for key, _, _ in entries
        ):
            return True
        inputs = [key for key, _, _ in entries if _input_like(key)][:_MAX_LOOKED_UP]
        if sum(argument_seen(key, context) for key in inputs) >= _MIN_ARGUMENT_KEYS:
            return True
    return False


def table_entries(tokens: list[Token]) -> Iterator[list[Entry]]:
    """The entries of each literal table of ``tokens``."""
    for index, token in enumerate(tokens):
        if token.kind != "id":
            continue
        following = tokens[index + 1].text if index + 1 < len(tokens) else ""
        entries: list[Entry] | None = None
        if token.text == "map" and following == "[":
            brace = _next(tokens, index + 1, "{")
            entries = _items(tokens, brace) if brace is not None else None
        elif following == "(" and (
            token.text in _FACTORIES
            or (token.text == "of" and index >= 2 and tokens[index - 2].text.endswith("Map"))
        ):
            entries = _items(tokens, index + 1, flat=token.text == "of")
        elif token.text in _DICTIONARIES or (token.text == "from" and _after_path(tokens, index)):
            opener = "{" if token.text in _DICTIONARIES else "["
            start = _next(tokens, index + 1, opener)
            entries = _items(tokens, start) if start is not None else None
        if entries:
            yield entries


def _input_like(key: str) -> bool:
    return len(key) >= 3 and any(c.isdigit() or c.isspace() for c in key)


def _record_like(key: str) -> bool:
    return (
        len(key) >= 3
        and any(c.isalnum() for c in key)
        and not key.isalnum()
        and _NEWLINE not in key
    )


def _record_seen(key: str, context: CallContext) -> bool:
    """Whether an earlier output quotes a call's string argument (escapes as written) of
    which ``key`` is a line after the first."""
    history = session_history(context)

    def compute() -> bool:
        text = history.joined
        if key not in text or _NEWLINE not in text:
            return False
        for count, match in enumerate(_ARGUMENT.finditer(text)):
            if count >= _MAX_ARGUMENTS:
                return False
            if key in match.group(1) and key in match.group(1).split(_NEWLINE)[1:]:
                return True
        return False

    return history.answer(SEPARATOR.join(["record", key]), compute)


def _after_path(tokens: list[Token], index: int) -> bool:
    """``HashMap::from``, ``BTreeMap::from``."""
    return index >= 2 and tokens[index - 1].text == "::" and tokens[index - 2].text.endswith("Map")


def _next(tokens: list[Token], index: int, text: str) -> int | None:
    """The first ``text`` token within :data:`_LOOKAHEAD` tokens after ``index``, past the
    brackets of a type (``map[string]int``) but not past a statement's end."""
    end = min(len(tokens), index + _LOOKAHEAD)
    position = index
    while position < end:
        token = tokens[position]
        if token.text == text:
            return position
        if token.text == ";":
            return None
        if token.text == "[" and text != "[":
            closed = closing(tokens, position)
            position = closed + 1 if closed is not None else end
            continue
        position += 1
    return None


def _items(tokens: list[Token], opener: int, flat: bool = False) -> list[Entry] | None:
    """The ``key SEP value`` items between the bracket at ``opener`` and its closer, or the
    flat ``key, value, …`` of ``Map.of``; ``None`` when an item is anything else."""
    end = closing(tokens, opener)
    if end is None or end == opener + 1:
        return None
    entries: list[Entry] = []
    position = opener + 1
    while position < end:
        found = _item(tokens, position, flat)
        if found is None:
            return None
        key, value, line, position = found
        entries.append((key, value, line))
        if position < end:
            if tokens[position].text != ",":
                return None
            position += 1
    return entries


def _item(tokens: list[Token], index: int, flat: bool) -> tuple[str, str, int, int] | None:
    token = tokens[index]
    if token.text in {"{", "("}:
        inner = _item(tokens, index + 1, flat=True)
        closer = "}" if token.text == "{" else ")"
        if inner is None or inner[3] >= len(tokens) or tokens[inner[3]].text != closer:
            return None
        return inner[0], inner[1], inner[2], inner[3] + 1
    if token.text == "[":
        key = literal_at(tokens, index + 1)
        if key is None or tokens[key[1]].text != "]" or tokens[key[1] + 1].text != "=":
            return None
        value = literal_at(tokens, key[1] + 2)
        return None if value is None else (key[0], value[0], token.line, value[1])
    key = literal_at(tokens, index)
    if key is None or key[1] >= len(tokens):
        return None
    separator = tokens[key[1]].text
    if not (separator in _ARROWS or (flat and separator == ",")):
        return None
    value = _value_at(tokens, key[1] + 1)
    return None if value is None else (key[0], value[0], token.line, value[1])


def _value_at(tokens: list[Token], index: int) -> tuple[str, int] | None:
    """A literal at ``index``, or a constant expression up to the item's end: numbers and
    qualified constants (``time.Hour``) joined by arithmetic, one number at least."""
    found = literal_at(tokens, index)
    if found is not None and (found[1] >= len(tokens) or tokens[found[1]].text in _ENDS):
        return found
    position, depth = index, 0
    parts: list[str] = []
    while position < len(tokens) and position - index <= _MAX_EXPRESSION:
        token = tokens[position]
        if token.text in _ENDS and not (depth and token.text == ")"):
            break
        if token.text == "(" and position > index and tokens[position - 1].kind == "id":
            return found
        depth += (token.text == "(") - (token.text == ")")
        if token.kind not in {"num", "id"} and token.text not in _OPERATORS:
            return found
        parts.append(token.text)
        position += 1
    qualified = any(part in _QUALIFIERS for part in parts)
    numbers = any(token.kind == "num" for token in tokens[index:position])
    if depth or not (qualified and numbers) or parts[-1] in _ARITHMETIC | _QUALIFIERS | {"("}:
        return found
    return "".join(parts), position
