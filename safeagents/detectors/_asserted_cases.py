"""The calls a session's tests assert with literal arguments and a literal expected value.

``assert candidate("abc") == 3``, ``assert f(2, [1, 2]) == 5``, ``assert mod.f(7) == 1``,
``assert Solution().f(7) == 1`` and ``self.assertEqual(f(7), 1)``, one a line, from the
instruction, every tool output (a test file read, lines a ``grep -n`` listed, a traceback
quoting the failing line) and
test files the agent wrote; a call through a name the text imports under another (``from
solution import count_pairs as f``) asserts the imported function. An output that reports a
failure (a traceback, ``FAILED``, ``AssertionError``) marks the assertion lines a traceback
quotes (the line after ``File "…", line N``, or pytest's ``>`` line) as seen failing, and so
does a failure's ``assert 778335790 == 778335787`` (pytest's summary of values alone, or
unittest's ``AssertionError: 778335790 != 778335787``) for the asserted calls expecting that
distinctive value (a number of 100 and more, a string of 8+ characters), whichever output
showed the call, or any other value (``assert 3 == 4``) that only one asserted call of the
session expects. Each text is read once (kept by identity) and the book of a session grows
with its new outputs only.
"""

from __future__ import annotations

import ast
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, NamedTuple

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents._tool_output import LINE_NUMBER
from safeagents.detectors._identity_cache import IdentityCache
from safeagents.detectors._safe_eval import Evaluator, Unknown

__all__ = ["Case", "CaseBook", "call_key", "parse_cases", "session_cases"]

_GREP = r"[\w./-]*\.py[:-](?:\d+[:-])?|\d+[:-]"
"""``grep -n``'s ``tests/test_x.py:12:`` (``-`` on a context line), ``12:``, or the file alone."""
_LINE = re.compile(
    r"^(?=[^\n]*?assert)"
    rf"(?P<prefix>[ \t]*(?:{LINE_NUMBER}|{_GREP})?[ \t]*(?:>>>|>)?[ \t]*)"
    r"(?P<code>(?:assert[ \t]+[\w.()]+[ \t]*\(|self\.assertEqual[ \t]*\().*)$",
    re.MULTILINE,
)
_ALIAS = re.compile(
    rf"^[ \t]*(?:{LINE_NUMBER})?[ \t]*from[ \t]+[\w.]+[ \t]+import"
    r"[ \t]+(\w+)[ \t]+as[ \t]+(\w+)[ \t]*$",
    re.MULTILINE,
)
"""``from solution import count_pairs as f``: the tests call ``f``, the module defines
``count_pairs``; the asserted calls of the text are the function's."""
_TRACED = re.compile(r'[ \t]*File "[^"\n]*", line \d+')
_VALUE = r"-?\d[\d_.]*|'[^'\n]*'|\"[^\"\n]*\""
_FAILED_VALUES = re.compile(
    rf"(?:\bassert (?P<got>{_VALUE}) ==|^AssertionError: (?P<unequal>{_VALUE}) !=) "
    rf"(?P<expected>{_VALUE})[ \t]*$",
    re.MULTILINE,
)
"""pytest's ``assert 3 == 4`` and unittest's ``AssertionError: 3 != 4`` (``assertEqual(f(x),
4)``): the value got, then the one expected."""
_MIN_FAILED_NUMBER = 100
_MIN_FAILED_STRING = 8
_MAX_PLAIN = 64
_FAILURE = re.compile(r"Traceback \(most recent call last\)|AssertionError|\bFAILED\b|^E\s", re.M)
_MAX_LINE = 4_000
_MAX_ALIAS_SCAN = 20_000
_MAX_LINES = 2_000
_MAX_CASES = 400
_ARGUMENT_STEPS = 2_000
_CACHE_SIZE = 1_024


class Case(NamedTuple):
    """One asserted call: ``callee(*args) == expected``; ``key`` is the call as written."""

    callee: str
    args: tuple[object, ...]
    expected: object
    key: str


class _Parsed(NamedTuple):
    cases: tuple[Case, ...]
    idents: tuple[tuple[str, str], ...]
    """Each case's call and expected value as written, which the book keeps one of."""
    failed: frozenset[str]
    answers: frozenset[str] = frozenset()
    """The distinctive expected values of failures that show values alone, as ``repr``."""
    plain: frozenset[str] = frozenset()
    """The other expected values of such failures, which mark a call only one expects."""
    failed_calls: frozenset[tuple[str, ...]] = frozenset()
    """The arguments of each failing asserted call (``repr``s, sorted), also of those whose
    expected value is not a literal (``assert Rational('2.5', '5') == Rational(1, 3)``)."""


def parse_cases(text: str) -> tuple[tuple[Case, ...], frozenset[str]]:
    """The asserted calls of ``text`` and the keys of those a traceback in it quotes."""
    parsed = _parse(text)
    return parsed.cases, parsed.failed


def _parse(text: str) -> _Parsed:
    cases: list[Case] = []
    failed: set[str] = set()
    failed_calls: set[tuple[str, ...]] = set()
    failure = _FAILURE.search(text) is not None
    aliases = {alias: name for name, alias in _ALIAS.findall(text[:_MAX_ALIAS_SCAN])}
    for count, match in enumerate(_LINE.finditer(text) if "assert" in text else ()):
        if count >= _MAX_LINES:
            break
        code = match.group("code")
        if len(code) > _MAX_LINE:
            continue
        case = _case(code)
        if case is None:
            continue
        if case.callee in aliases:
            case = case._replace(callee=aliases[case.callee])
        failing = failure and (">" in match.group("prefix") or _after_frame(text, match.start()))
        if failing:
            failed_calls.add(call_key(case.args))
        if case.expected is _UNKNOWN:
            continue
        cases.append(case)
        if failing:
            failed.add(case.key)
    idents = tuple((case.key, repr(case.expected)) for case in cases)
    answers, plain = _failed_answers(text) if failure else (frozenset(), frozenset())
    return _Parsed(tuple(cases), idents, frozenset(failed), answers, plain, frozenset(failed_calls))


def call_key(args: tuple[object, ...]) -> tuple[str, ...]:
    """A call's arguments as an unordered key: their ``repr``s, sorted."""
    return tuple(sorted(map(repr, args)))


def _failed_answers(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The expected values of failures showing values alone: distinctive ones, and others."""
    answers: set[str] = set()
    plain: set[str] = set()
    for count, match in enumerate(_FAILED_VALUES.finditer(text)):
        if count >= _MAX_LINES:
            break
        try:
            got = ast.literal_eval(match.group("got") or match.group("unequal"))
            expected = ast.literal_eval(match.group("expected"))
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        if got != expected and not isinstance(expected, bool):
            (answers if _distinctive(expected) else plain).add(repr(expected))
    return frozenset(answers), frozenset(plain)


def _distinctive(value: object) -> bool:
    if isinstance(value, str):
        return len(value) >= _MIN_FAILED_STRING
    return isinstance(value, int | float) and abs(value) >= _MIN_FAILED_NUMBER


def _after_frame(text: str, start: int) -> bool:
    before = text.rfind("\n", 0, max(start - 1, 0))
    return bool(_TRACED.match(text, before + 1, start))


def _case(code: str) -> Case | None:
    try:
        body = ast.parse(code.strip()).body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if len(body) != 1:
        return None
    node = body[0]
    if isinstance(node, ast.Assert):
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            return _call_case(test.left, test.comparators[0])
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        if len(call.args) == 2 and not call.keywords:
            return _call_case(call.args[0], call.args[1])
    return None


def _call_case(call: ast.expr, expected: ast.expr) -> Case | None:
    if not isinstance(call, ast.Call) or call.keywords or not call.args:
        return None
    func = call.func
    if isinstance(func, ast.Name):
        callee = func.id
    elif isinstance(func, ast.Attribute) and _plain_owner(func.value):
        callee = func.attr
    else:
        return None
    evaluator = Evaluator(_ARGUMENT_STEPS)
    try:
        args = tuple(evaluator.value(arg, {}) for arg in call.args)
    except Unknown:
        return None
    try:
        value = evaluator.value(expected, {})
    except Unknown:
        value = _UNKNOWN
    return Case(callee, args, value, ast.unparse(call))


_UNKNOWN = object()
"""The expected value of an asserted call that is not a literal: the call is kept only as
failing (``_Parsed.failed_calls``), never as a case."""


def _plain_owner(node: ast.expr) -> bool:
    """``mod``, ``pkg.mod`` or ``Solution()``: not an object whose state the call reads."""
    while isinstance(node, ast.Attribute):
        node = node.value
    if isinstance(node, ast.Call):
        return not node.args and not node.keywords and isinstance(node.func, ast.Name)
    return isinstance(node, ast.Name)


_parsed: IdentityCache[str, _Parsed] = IdentityCache(_parse, _CACHE_SIZE)


class CaseBook:
    """The asserted calls of a session by callee, and the keys of those seen failing."""

    __slots__ = ("answers", "by_callee", "failed", "failed_calls", "keys", "plain")

    def __init__(self) -> None:
        self.by_callee: dict[str, list[Case]] = {}
        self.failed: set[str] = set()
        self.keys: set[tuple[str, str]] = set()
        self.answers: set[str] = set()
        self.plain: set[str] = set()
        self.failed_calls: set[tuple[str, ...]] = set()
        """The arguments of the asserted calls seen failing (:func:`call_key`), whatever
        their expected value."""

    def add(self, parsed: _Parsed) -> None:
        sole: set[str] = set()
        for case, ident in zip(parsed.cases, parsed.idents, strict=True):
            if len(self.keys) >= _MAX_CASES:
                break
            if ident not in self.keys:
                self.keys.add(ident)
                self.by_callee.setdefault(case.callee, []).append(case)
                if ident[1] in self.answers:
                    self.failed.add(case.key)
                elif ident[1] in self.plain:
                    sole.add(ident[1])
        self.failed.update(parsed.failed)
        self.failed_calls.update(parsed.failed_calls)
        new = parsed.answers - self.answers
        if new:
            self.answers |= new
            self.failed.update(key for key, expected in self.keys if expected in new)
        for expected in parsed.plain - self.plain:
            if len(self.plain) < _MAX_PLAIN:
                self.plain.add(expected)
                sole.add(expected)
        for expected in sole:
            keys = [key for key, value in self.keys if value == expected]
            if len(keys) == 1:
                self.failed.add(keys[0])

    def copy(self) -> CaseBook:
        book = CaseBook()
        book.by_callee = {callee: list(cases) for callee, cases in self.by_callee.items()}
        book.failed = set(self.failed)
        book.keys = set(self.keys)
        book.answers = set(self.answers)
        book.plain = set(self.plain)
        book.failed_calls = set(self.failed_calls)
        return book

    def __bool__(self) -> bool:
        return bool(self.by_callee)


class _Ledger(NamedTuple):
    """A session's book as of its first ``outputs_read`` outputs and ``effects_read`` effects;
    the last of each is kept to recognise the same session in a fork (forks copy the lists,
    not their items)."""

    instruction: str
    outputs_read: int
    last_output: object
    output_book: CaseBook
    effects_read: int
    last_effect: object
    book: CaseBook


_lock = threading.Lock()
_ledgers: OrderedDict[int, _Ledger] = OrderedDict()
_LEDGERS = 64


def _extends(items: list[Any], read: int, last: object) -> bool:
    return read <= len(items) and (read == 0 or items[read - 1] is last)


def session_cases(context: CallContext) -> CaseBook:
    """The book of ``context``'s session so far, grown from the last one asked for the same
    session (or a fork of it) with only its new outputs and effects read."""
    session = context.session
    instruction, outputs, effects = session.model.instruction, session.tool_outputs, session.effects
    with _lock:
        ledger = _ledgers.get(id(instruction))
    if ledger is not None and ledger.instruction is not instruction:
        ledger = None
    if ledger is not None and _extends(outputs, ledger.outputs_read, ledger.last_output):
        output_book, outputs_read = ledger.output_book, ledger.outputs_read
    else:
        output_book, outputs_read = CaseBook(), 0
        output_book.add(_parsed(instruction))
    if (
        ledger is not None
        and output_book is ledger.output_book
        and outputs_read == len(outputs)
        and _extends(effects, ledger.effects_read, ledger.last_effect)
    ):
        if ledger.effects_read == len(effects):
            return ledger.book
        book, effects_read = ledger.book.copy(), ledger.effects_read
    else:
        if outputs_read < len(outputs):
            output_book = output_book.copy()
            for output in outputs[outputs_read:]:
                if isinstance(output, str) and output:
                    output_book.add(_parsed(output))
        book, effects_read = output_book.copy(), 0
    for text in _test_writes(effects[effects_read:], context):
        book.add(_parsed(text))
    grown = _Ledger(
        instruction,
        len(outputs),
        outputs[-1] if outputs else None,
        output_book,
        len(effects),
        effects[-1] if effects else None,
        book,
    )
    with _lock:
        _ledgers[id(instruction)] = grown
        _ledgers.move_to_end(id(instruction))
        while len(_ledgers) > _LEDGERS:
            _ledgers.popitem(last=False)
    return book


def _test_writes(effects: list[Effect], context: CallContext) -> Iterator[str]:
    for effect in effects:
        if effect.kind != "write" or not effect.path:
            continue
        text = effect.content or effect.added
        if text and context.is_test_path(effect.path.replace("\\", "/")):
            yield text
