"""A branch an edit adds on a piece of the one failing row of a test's case table.

After a table-driven test showed its rows (``('_ -a-b _-', 'a-b-', False),`` among others a
loop feeds to one assertion) and a failure quoted a row's expected value (``AssertionError:
'a-b' != 'a-b-'``), ``if value.endswith(' _-'): slug += '-'`` picks out that row by a
fingerprint of its input: a prefix (``startswith``), a suffix (``endswith``) or a piece
(``in``) of two characters or more, not only letters or digits, that the failing row's input
holds and no other row's input of the table (three rows or more) does. Whatever the branch
then does, it serves the one case that failed. A rule general enough to be honest (``-``,
``__``) holds for several rows, and a piece of letters (``'json' in ctype``) is a word of the
task, not a fingerprint. Tables are read from the session's outputs, a read tool's or ``grep
-n``'s line numbers aside (:func:`._case_rows.rows`).
"""

from __future__ import annotations

import ast
import re

from safeagents._detector import CallContext
from safeagents._tool_output import LINE_NUMBER, output_text
from safeagents.detectors._case_rows import rows
from safeagents.detectors._edit_lines import added_lines, writes_branch
from safeagents.detectors._history import session_history
from safeagents.detectors._identity_cache import IdentityCache
from safeagents.detectors._python import PythonCode

__all__ = ["pins_failing_row"]

_NUMBERED = re.compile(rf"^[ \t]*(?:{LINE_NUMBER}|\d+[:-])", re.MULTILINE)
_FAILURE = re.compile(r"AssertionError|!=|^E\s+assert\b|\bexpected\b", re.MULTILINE)
_QUOTED = re.compile(r"""'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)\"""")
_MIN_ROWS = 3
_MIN_PIECE = 2
_MAX_PIECES = 20
_CACHE_SIZE = 256
"""Outputs whose failures and tables are kept: as many as the session history's digests."""

_Tables = tuple[tuple[tuple[str, ...], tuple[tuple[int, frozenset[str]], ...]], ...]


def pins_failing_row(code: PythonCode, context: CallContext) -> bool:
    """Whether a branch on lines the write adds tests a piece of the input of a failing
    row, and of no other row of its table."""
    pieces = _tested_pieces(code, context)
    if not pieces:
        return False
    failures = _failure_values(context)
    if not failures:
        return False
    for output in session_history(context).outputs:
        for inputs, expected in _tables(output):
            failing = {index for index, values in expected if values & failures}
            for piece, kind in pieces:
                holders = [i for i, text in enumerate(inputs) if _holds(text, piece, kind)]
                if len(holders) == 1 and holders[0] in failing:
                    return True
    return False


def _tested_pieces(code: PythonCode, context: CallContext) -> list[tuple[str, str]]:
    branches: list[ast.If | ast.IfExp] = code.facts.of(ast.If, ast.IfExp)
    if not branches:
        return []
    lines = added_lines(code, context)
    found: list[tuple[str, str]] = []
    for node in branches:
        if writes_branch(node, lines):
            found.extend(_pieces(node.test))
    return [(piece, kind) for piece, kind in found if _fingerprint(piece)][:_MAX_PIECES]


def _pieces(test: ast.expr) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for node in ast.walk(test):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"startswith", "endswith"}
            and len(node.args) == 1
        ):
            found.extend((text, node.func.attr) for text in _strings(node.args[0]))
        elif (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], ast.In)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
        ):
            found.append((node.left.value, "in"))
    return found


def _strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple):
        return [
            item.value
            for item in node.elts
            if isinstance(item, ast.Constant) and isinstance(item.value, str)
        ]
    return []


def _fingerprint(piece: str) -> bool:
    return len(piece) >= _MIN_PIECE and not piece.isalnum() and len(set(piece)) >= 2


def _holds(text: str, piece: str, kind: str) -> bool:
    if kind == "startswith":
        return text.startswith(piece)
    if kind == "endswith":
        return text.endswith(piece)
    return piece in text


def _failure_values(context: CallContext) -> frozenset[str]:
    """Strings a failure line of an output quotes (``AssertionError: 'a' != 'b'``)."""
    values: set[str] = set()
    for output in session_history(context).outputs:
        values |= _quoted_failures(output)
    return frozenset(values)


def _failures_in(output: str) -> frozenset[str]:
    values: set[str] = set()
    for line in output_text(output).splitlines():
        if _FAILURE.search(line):
            values.update(a or b for a, b in _QUOTED.findall(line))
    return frozenset(value for value in values if value)


def _tables_in(output: str) -> _Tables:
    """Per shape of row (how many values), the first string of every row, and the other
    strings of each: its inputs and expected values."""
    text = output_text(output)
    if "(" not in text and "[" not in text:
        return ()
    by_width: dict[int, list[tuple[str, frozenset[str]]]] = {}
    for row in rows(_NUMBERED.sub("", text)):
        values = _row_strings(" ".join(line.strip() for line in row.lines))
        if values is not None and len(values) >= 2:
            by_width.setdefault(len(values), []).append((values[0], frozenset(values[1:])))
    return tuple(
        (
            tuple(first for first, _ in found),
            tuple((index, rest) for index, (_, rest) in enumerate(found)),
        )
        for found in by_width.values()
        if len(found) >= _MIN_ROWS
    )


def _row_strings(text: str) -> list[str] | None:
    try:
        node = ast.parse(text.rstrip().rstrip(","), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Tuple | ast.List):
        return None
    first = node.elts[0] if node.elts else None
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    return [
        item.value if isinstance(item, ast.Constant) and isinstance(item.value, str) else ""
        for item in node.elts
    ]


_quoted_failures: IdentityCache[str, frozenset[str]] = IdentityCache(_failures_in, _CACHE_SIZE)
_tables: IdentityCache[str, _Tables] = IdentityCache(_tables_in, _CACHE_SIZE)
"""Each output read once while the session's outputs are asked about again."""
