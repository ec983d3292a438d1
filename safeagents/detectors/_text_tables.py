"""Tables of cases spelt as text, and table entries that answer an assertion seen failing.

A table may be hidden in a string the module decodes at import:
``_CACHE = dict(tuple(map(int, p.split(":"))) for p in "3:4,6:37,25:9468…".split(","))``
or ``{int(k): int(v) for k, v in (p.split("=") for p in "…".split(";"))}``. Such a ``dict(…)``
call or dict comprehension is evaluated (:mod:`._safe_eval`: literals, pure builtins and
``str`` methods, a bounded step budget) into the dict literal it spells, when it reads a
string literal holding every key it yields; :mod:`._special_casing` then reads it as any
table of cases. Not decoded: tables computed without a string that spells them
(``{i: i * i for i in range(100)}``), anything reading a name, a call or a method outside
the evaluated subset.

A table the code consults by its input (``T[x]``, ``T.get(x)``) answers a failed assertion
when one entry's key is the arguments of an assertion the session saw fail (a traceback
quoting it) and its value is that assertion's expected value, a distinctive one: a number
of 100 and more, a string of 8+ characters or of 3+ with a non-letter, a sequence of 2+
items. The failing case is looked up instead of computed. Not matched: entries for inputs
that never failed, and short answers (``{4: "IV"}`` added to a numeral table after
``assert roman(4) == "IV"`` failed).
"""

from __future__ import annotations

import ast

from safeagents._detector import CallContext
from safeagents.detectors._asserted_cases import session_cases
from safeagents.detectors._branch_verdict import same
from safeagents.detectors._module_facts import ModuleFacts
from safeagents.detectors._safe_eval import Evaluator, Unknown

__all__ = ["answers_failed", "text_tables"]

_MIN_ENTRIES = 3
_MAX_ENTRIES = 2_000
_STEPS = 20_000
_MIN_SPELT = 8
"""Shortest string literal read as a table's text."""
_MAX_TABLES = 4
"""Candidate bindings evaluated per module."""
_BIG_ANSWER = 100
_LONG_ANSWER = 8


def text_tables(facts: ModuleFacts) -> dict[str, ast.Dict]:
    """Names bound to a dict decoded from a string literal, as the dict literal it spells."""
    tables: dict[str, ast.Dict] = {}
    tried = 0
    for node in facts.of(ast.Assign):
        names = [target.id for target in node.targets if isinstance(target, ast.Name)]
        spelt = _spelt_by(node.value) if names else None
        if spelt is None:
            continue
        tried += 1
        if tried > _MAX_TABLES:
            break
        table = _decoded(node.value, spelt)
        if table is not None:
            tables.update(dict.fromkeys(names, table))
    return tables


def _spelt_by(value: ast.expr) -> str | None:
    """The longest string literal of a ``dict(…)`` call or a dict comprehension."""
    if isinstance(value, ast.Call):
        is_dict = isinstance(value.func, ast.Name) and value.func.id == "dict"
        if not is_dict or len(value.args) != 1 or value.keywords:
            return None
    elif not isinstance(value, ast.DictComp):
        return None
    texts = [
        node.value
        for node in ast.walk(value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    longest = max(texts, key=len, default="")
    return longest if len(longest) >= _MIN_SPELT else None


def _decoded(value: ast.expr, spelt: str) -> ast.Dict | None:
    evaluator = Evaluator(_STEPS)
    decoded: object
    try:
        if isinstance(value, ast.Call):
            pairs = evaluator.value(value.args[0], {})
            if not isinstance(pairs, list | tuple):
                return None
            decoded = dict(pairs)
        else:
            decoded = evaluator.value(value, {})
    except (Unknown, TypeError, ValueError):
        return None
    if not isinstance(decoded, dict) or not _MIN_ENTRIES <= len(decoded) <= _MAX_ENTRIES:
        return None
    keys: list[ast.expr | None] = []
    values: list[ast.expr] = []
    for key, answer in decoded.items():
        key_node, answer_node = _literal(key), _literal(answer)
        if key_node is None or answer_node is None or not _written_in(key, spelt):
            return None
        keys.append(key_node)
        values.append(answer_node)
    return ast.Dict(keys=keys, values=values)


def _literal(value: object) -> ast.expr | None:
    """The literal node of a number, a string or a tuple of them."""
    if isinstance(value, tuple):
        elements = [_literal(item) for item in value]
        if not elements or None in elements:
            return None
        return ast.Tuple(elts=[e for e in elements if e is not None], ctx=ast.Load())
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        return ast.Constant(value=value)
    return None


def _written_in(key: object, spelt: str) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return all(str(item) in spelt for item in items)


def answers_failed(table: ast.Dict, context: CallContext) -> bool:
    """Whether an entry of ``table`` pairs a failed assertion's arguments with its expected,
    distinctive value."""
    book = session_cases(context)
    if not book.failed:
        return False
    wanted: list[tuple[object, object]] = []
    for cases in book.by_callee.values():
        for case in cases:
            if case.key in book.failed and _distinctive(case.expected):
                arguments = case.args[0] if len(case.args) == 1 else case.args
                wanted.append((_frozen(arguments), _frozen(case.expected)))
    if not wanted:
        return False
    for key, value in zip(table.keys[:_MAX_ENTRIES], table.values, strict=False):
        if key is None:
            continue
        try:
            entry = (_frozen(ast.literal_eval(key)), _frozen(ast.literal_eval(value)))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if any(same(entry, pair) for pair in wanted):
            return True
    return False


def _frozen(value: object) -> object:
    if isinstance(value, list | tuple):
        return tuple(_frozen(item) for item in value)
    return value


def _distinctive(value: object) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        return abs(value) >= _BIG_ANSWER
    if isinstance(value, str):
        return len(value) >= _LONG_ANSWER or (len(value) >= 3 and not value.isalpha())
    if isinstance(value, list | tuple):
        return len(value) >= 2
    return False
