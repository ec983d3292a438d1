"""The calls a session's tests assert with literal arguments and a literal expected value.

``assert candidate("abc") == 3``, ``assert f(2, [1, 2]) == 5``, ``assert mod.f(7) == 1``,
``assert Solution().f(7) == 1`` and ``self.assertEqual(f(7), 1)``, one a line, from the
instruction, every tool output (a test file read, a traceback quoting the failing line) and
test files the agent wrote. An output that reports a failure (a traceback, ``FAILED``,
``AssertionError``) marks the assertion lines a traceback quotes (the line after
``File "…", line N``, or pytest's ``>`` line) as seen failing. Each text is read once (kept
by identity) and the book of a session grows with its new outputs only.
"""

from __future__ import annotations

import ast
import re
import threading
from collections.abc import Iterator
from typing import NamedTuple

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors._identity_cache import IdentityCache
from safeagents.detectors._safe_eval import Evaluator, Unknown

__all__ = ["Case", "CaseBook", "parse_cases", "session_cases"]

_LINE = re.compile(
    r"^(?P<prefix>[ \t]*(?:\d+(?:\t|→))?[ \t]*(?:>>>|>)?[ \t]*)"
    r"(?P<code>(?:assert[ \t]+[\w.()]+[ \t]*\(|self\.assertEqual[ \t]*\().*)$",
    re.MULTILINE,
)
_TRACED = re.compile(r'[ \t]*File "[^"\n]*", line \d+')
_FAILURE = re.compile(r"Traceback \(most recent call last\)|AssertionError|\bFAILED\b|^E\s", re.M)
_MAX_LINE = 4_000
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
    failed: frozenset[str]


def parse_cases(text: str) -> tuple[tuple[Case, ...], frozenset[str]]:
    """The asserted calls of ``text`` and the keys of those a traceback in it quotes."""
    parsed = _parse(text)
    return parsed.cases, parsed.failed


def _parse(text: str) -> _Parsed:
    cases: list[Case] = []
    failed: set[str] = set()
    failure = _FAILURE.search(text) is not None
    for count, match in enumerate(_LINE.finditer(text)):
        if count >= _MAX_LINES:
            break
        code = match.group("code")
        if len(code) > _MAX_LINE:
            continue
        case = _case(code)
        if case is None:
            continue
        cases.append(case)
        if failure and (">" in match.group("prefix") or _after_frame(text, match.start())):
            failed.add(case.key)
    return _Parsed(tuple(cases), frozenset(failed))


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
        value = evaluator.value(expected, {})
    except Unknown:
        return None
    return Case(callee, args, value, ast.unparse(call))


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

    __slots__ = ("by_callee", "failed", "keys")

    def __init__(self) -> None:
        self.by_callee: dict[str, list[Case]] = {}
        self.failed: set[str] = set()
        self.keys: set[tuple[str, str]] = set()

    def add(self, parsed: _Parsed) -> None:
        for case in parsed.cases:
            if (case.key, repr(case.expected)) in self.keys or len(self.keys) >= _MAX_CASES:
                continue
            self.keys.add((case.key, repr(case.expected)))
            self.by_callee.setdefault(case.callee, []).append(case)
        self.failed.update(parsed.failed)

    def copy(self) -> CaseBook:
        book = CaseBook()
        book.by_callee = {callee: list(cases) for callee, cases in self.by_callee.items()}
        book.failed = set(self.failed)
        book.keys = set(self.keys)
        return book

    def __bool__(self) -> bool:
        return bool(self.by_callee)


class _Ledger(NamedTuple):
    instruction: str
    outputs: list[str]
    effects: list[Effect]
    read: tuple[int, int]
    book: CaseBook


_lock = threading.Lock()
_last: _Ledger | None = None


def session_cases(context: CallContext) -> CaseBook:
    """The book of ``context``'s session so far, grown from the last one asked for when it
    is the same session with more outputs and effects."""
    global _last
    session = context.session
    instruction, outputs, effects = session.model.instruction, session.tool_outputs, session.effects
    with _lock:
        last = _last
    if (
        last is not None
        and last.instruction is instruction
        and last.outputs is outputs
        and last.effects is effects
        and last.read[0] <= len(outputs)
        and last.read[1] <= len(effects)
    ):
        if last.read == (len(outputs), len(effects)):
            return last.book
        book = last.book.copy()
        start_outputs, start_effects = last.read
    else:
        book = CaseBook()
        book.add(_parsed(instruction))
        start_outputs = start_effects = 0
    for output in outputs[start_outputs:]:
        if isinstance(output, str) and output:
            book.add(_parsed(output))
    for text in _test_writes(effects[start_effects:], context):
        book.add(_parsed(text))
    with _lock:
        _last = _Ledger(instruction, outputs, effects, (len(outputs), len(effects)), book)
    return book


def _test_writes(effects: list[Effect], context: CallContext) -> Iterator[str]:
    for effect in effects:
        if effect.kind != "write" or not effect.path:
            continue
        text = effect.content or effect.added
        if text and context.is_test_path(effect.path.replace("\\", "/")):
            yield text
