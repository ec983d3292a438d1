"""What earlier outputs and the instruction show: literals, assertions and fixture rows.

Each question is answered once per call's :class:`~._history.History` (the detectors of one
call ask the same ones), over the outputs joined into one text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from safeagents._detector import CallContext
from safeagents.detectors._history import SEPARATOR, History, session_history

__all__ = [
    "argument_seen",
    "argument_word_seen",
    "assertion_seen",
    "call_asserted",
    "call_kept",
    "defined_in_instruction",
    "literal_seen",
    "output_lines",
    "pairing_seen",
    "quoted_seen",
    "row_answer_seen",
    "row_seen",
    "sequence_seen",
    "test_shown",
]


def literal_seen(literal: str, context: CallContext) -> bool:
    """Whether ``literal`` (a number's digits or a string of 3+ chars) appears in outputs."""
    if len(literal) < 3 and not literal.lstrip("-").isdigit():
        return False
    history = session_history(context)
    return history.answer(literal, lambda: _literal_seen(literal, history))


def quoted_seen(literal: str, context: CallContext) -> bool:
    """Whether an earlier output spells the string ``literal`` in quotes, as code writes a
    string literal (``['中文', 1]``), not only bare, as it writes a name (``(?P<days>``)."""
    history = session_history(context)
    return history.answer(
        SEPARATOR.join(["quoted", literal]),
        lambda: any(q + literal + q in history.joined for q in ("'", '"', "`")),
    )


_MIN_SEQUENCE = 3
_MAX_SEQUENCE = 64
_BETWEEN = r"[\s,;()\[\]{}]+"


def sequence_seen(atoms: list[str], context: CallContext) -> bool:
    """Whether the constants ``atoms`` (numbers as written, strings as their text) appear in
    this order, apart only by brackets, commas and spaces, in an earlier output or the
    instruction: a tuple or list literal however the tests spelt it (``[[16,18],[1,15]]``
    for ``[[16, 18], [1, 15]]``, ``f(7, 31)`` for ``(7, 31)``)."""
    if not _MIN_SEQUENCE <= len(atoms) <= _MAX_SEQUENCE:
        return False
    history = session_history(context)

    def compute() -> bool:
        quoted = [rf"['\"]?{re.escape(atom)}['\"]?" for atom in atoms]
        pattern = re.compile(r"(?<![\w.])" + _BETWEEN.join(quoted) + r"(?![\w.])")
        texts = (history.joined, history.instruction(context))
        return any(atoms[0] in text and pattern.search(text) is not None for text in texts)

    return history.answer(SEPARATOR.join(atoms), compute)


_WANT = r"[,;]\s*want\b"
_ASSERTION = re.compile(rf"\bassert|==|\bexpect|\bEqual|\btoBe\b|\bgot\s*!=|{_WANT}")
"""An assertion-like line; ``got != …`` is Go's (``if got := f("x"); got != "y" {``), and so
is ``, want …``, the failure line its tests print (``f("x", 10) = "z", want "y"``)."""
_MAX_LINES = 200
"""Occurrences of a literal whose lines are looked at, per question."""


def assertion_seen(inputs: list[str], answer: str, context: CallContext) -> bool:
    """Whether one assertion-like line of an earlier output or of the instruction holds every
    literal of ``inputs`` and then ``answer`` (``assert candidate(19, 50, 2) == 14`` for a
    branch ``if (low, high, k) == (19, 50, 2): return 14``): the branch answers exactly what a
    test asserts."""
    if not inputs:
        return False
    history = session_history(context)
    return history.answer(
        SEPARATOR.join([*inputs, "->", answer]),
        lambda: any(
            _assertion_in(text, inputs, answer)
            for text in (history.joined, history.instruction(context))
        ),
    )


def argument_seen(literal: str, context: CallContext) -> bool:
    """Whether an earlier output or the instruction quotes the string ``literal`` as a call's
    argument (``decomposeColor('rgb(255 0 0 / 50%)')``): an input the tests pass."""
    history = session_history(context)

    def compute() -> bool:
        call = re.compile(rf"[\w$\])]\s*\(\s*(['\"`]){re.escape(literal)}\1")
        return any(
            literal in text and call.search(text) is not None
            for text in (history.joined, history.instruction(context))
        )

    return history.answer(SEPARATOR.join(["argument", literal]), compute)


def argument_word_seen(word: str, context: CallContext) -> bool:
    """Whether an earlier output or the instruction quotes a call's string argument holding
    ``word`` as a whole word, in any case (``slugify("Straße nach Łódź")`` for ``łódź``)."""
    history = session_history(context)

    def compute() -> bool:
        call = re.compile(
            rf"[\w$\])]\s*\(\s*(['\"`])[^'\"`\n]{{0,200}}?(?<!\w){re.escape(word)}(?!\w)"
            rf"[^'\"`\n]{{0,200}}?\1",
            re.IGNORECASE,
        )
        return any(
            word.lower() in text.lower() and call.search(text) is not None
            for text in (history.joined, history.instruction(context))
        )

    return history.answer(SEPARATOR.join(["argument-word", word]), compute)


def defined_in_instruction(key: str, value: str, context: CallContext) -> bool:
    """Whether one line of the instruction names ``key`` as a word beside ``value`` (``| KiB
    | 1024 |``, powers spelt out: ``| MB | 1000**2 |``), a line that is no assertion and does
    not pass ``key`` to a call: an entry of the table the task itself defines (units, codes),
    which code spells out whatever an output showed of the value."""
    history = session_history(context)

    def compute() -> bool:
        instruction = history.instruction(context)
        if key not in instruction or value not in instruction:
            return False
        word = re.compile(rf"(?<![\w.]){re.escape(key)}(?!\w)")
        paired = re.compile(rf"(?<![\w.]){re.escape(value)}(?!\w|\.\d)")
        passed = re.compile(rf"[\w$\])]\s*\(\s*['\"`]?{re.escape(key)}(?!\w)")
        return any(
            word.search(line) is not None
            and paired.search(line) is not None
            and not _ASSERTION.search(line)
            and passed.search(line) is None
            for line in instruction.splitlines()
        )

    return history.answer(SEPARATOR.join(["defined", key, value]), compute)


def row_seen(cells: list[str], context: CallContext) -> bool:
    """Whether one line of an earlier output or of the instruction quotes each string of
    ``cells`` in this order (``['^0.2.0', '0.2.1-rc.1', {…}]`` for the key ``'^0.2.0
    0.2.1-rc.1'``): a row of the tests' fixture table, joined into one key."""
    history = session_history(context)

    def compute() -> bool:
        later = [
            rf"[^\n]*?(['\"`]){re.escape(cell)}\{index + 2}" for index, cell in enumerate(cells[1:])
        ]
        row = re.compile(rf"{re.escape(cells[0])}(['\"`])" + "".join(later))
        return any(
            all(cell in text for cell in cells) and _row_in(text, row)
            for text in (history.joined, history.instruction(context))
        )

    return history.answer(SEPARATOR.join(["row", *cells]), compute)


def pairing_seen(inputs: list[str], answer: str, context: CallContext) -> bool:
    """Whether an assertion (:func:`assertion_seen`) or a table-driven test's row
    (:func:`row_answer_seen`) of an earlier output pairs ``inputs`` with ``answer``."""
    return assertion_seen(inputs, answer, context) or row_answer_seen(inputs, answer, context)


_ROW_START = re.compile(r"^\s*(?:[\w./-]+:(?=\d))?(?:\d+[:\t\u2192|-])?\s*[\[{(]")
"""A row's opening bracket, after a ``grep -n`` or read-tool line number if any."""


def row_answer_seen(inputs: list[str], answer: str, context: CallContext) -> bool:
    """Whether one line of an earlier output that opens a fixture row (``{``, ``[``, ``(``)
    holds every literal of ``inputs`` as a token and then ``answer``: a table-driven test's
    case (``{"1.0.0-rc.10", "1.0.0-rc.9", 1},``, ``['XMLHttpRequest', 'xmlHttpRequest'],``)
    answered by a branch."""
    if not inputs:
        return False
    history = session_history(context)
    return history.answer(
        SEPARATOR.join(["row-answer", *inputs, "->", answer]),
        lambda: _row_answer_in(history.joined, inputs, answer),
    )


def _row_answer_in(text: str, inputs: list[str], answer: str) -> bool:
    tokens = [_token(literal) for literal in inputs]
    expected = _token(answer)
    for line in _lines_holding(text, inputs, answer):
        if not _ROW_START.match(line):
            continue
        position = 0
        for token in tokens:
            found = token.search(line, position)
            if found is None:
                break
            position = found.end()
        else:
            if expected.search(line, position):
                return True
    return False


def _row_in(text: str, row: re.Pattern[str]) -> bool:
    """A match of ``row`` (its first cell spelt first, so that it is searched for by its
    literal) opened by the quote that closes that cell."""
    for count, match in enumerate(row.finditer(text)):
        if count >= _MAX_LINES:
            return False
        if match.start() > 0 and text[match.start() - 1] == match.group(1):
            return True
    return False


def output_lines(literal: str, context: CallContext, after: int = 0) -> Iterator[str]:
    """The lines of earlier outputs that hold ``literal`` (at most :data:`_MAX_LINES`), each
    with the ``after`` lines that follow it."""
    text = session_history(context).joined
    start = text.find(literal)
    count = 0
    while start >= 0 and count < _MAX_LINES:
        line_start = text.rfind("\n", 0, start) + 1
        end = start
        for _ in range(after + 1):
            end = text.find("\n", end + 1)
            if end < 0:
                end = len(text)
                break
        yield text[line_start:end]
        count += 1
        next_line = text.find("\n", start)
        start = -1 if next_line < 0 else text.find(literal, next_line)


def test_shown(name: str, context: CallContext) -> bool:
    """Whether an earlier output shows a test function ``name`` defined, collected or run
    (``def test_x(``, ``a.py::test_x``, ``FAIL: test_x (m.C)``, ``___ C.test_x ___``)."""
    history = session_history(context)

    def compute() -> bool:
        n = re.escape(name)
        shown = re.compile(
            rf"\bdef\s+{n}\s*\(|::{n}\b|^(?:FAIL|ERROR):\s+{n}\b|_ (?:\w+\.)?{n}[\[ ]"
            rf"|\b{n} \([\w.]+\)",
            re.MULTILINE,
        )
        return name in history.joined and bool(shown.search(history.joined))

    return history.answer(SEPARATOR.join(["test", name]), compute)


def call_asserted(name: str, context: CallContext) -> bool:
    """Whether an assertion-like line of an earlier output or of the instruction calls
    ``name`` (``assert c.area() == 6``): the tests call that function or method."""
    history = session_history(context)

    def compute() -> bool:
        call = _unglued(name, r"\s*\(", before=r"\w")
        return any(_call_in(text, call) for text in (history.joined, history.instruction(context)))

    return history.answer(SEPARATOR.join(["call", name]), compute)


def call_kept(name: str, context: CallContext) -> bool:
    """Whether a line of an earlier output keeps what a call of ``name`` returns (``rc =
    pipeline.main(["--input", d])``): code that calls it in its own process, as a test does."""
    history = session_history(context)

    def compute() -> bool:
        if name not in history.joined:
            return False
        kept = re.compile(rf"^[ \t]*\w+[ \t]*=[ \t]*(?:\w+\.)*{re.escape(name)}\(", re.MULTILINE)
        return kept.search(history.joined) is not None

    return history.answer(SEPARATOR.join(["kept", name]), compute)


def _call_in(text: str, call: re.Pattern[str]) -> bool:
    for count, match in enumerate(call.finditer(text)):
        if count >= _MAX_LINES:
            return False
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        if _ASSERTION.search(text, start, end if end >= 0 else len(text)):
            return True
    return False


def _token(literal: str) -> re.Pattern[str]:
    return _unglued(literal, r"(?![\w]|\.\d)")


def _unglued(literal: str, after: str, before: str = r"[\w.]") -> re.Pattern[str]:
    """``literal`` not preceded by a ``before`` character, then ``after``. The check of the
    character before is written after the literal (a lookbehind over it and one more): a
    pattern that starts with a lookbehind has no literal prefix, and ``re`` then tries it at
    every position of a long history, about 30 times slower."""
    return re.compile(rf"{re.escape(literal)}(?<!{before}[\s\S]{{{len(literal)}}}){after}")


def _lines_holding(text: str, inputs: list[str], answer: str) -> Iterator[str]:
    """The lines of ``text`` where the longest of ``inputs`` stands as a token (the first
    :data:`_MAX_LINES` of them), when ``text`` holds ``answer`` at all."""
    rarest = max(inputs, key=len)
    if rarest not in text or answer not in text:
        return
    for count, match in enumerate(_token(rarest).finditer(text)):
        if count >= _MAX_LINES:
            return
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        yield text[start : end if end >= 0 else len(text)]


def _assertion_in(text: str, inputs: list[str], answer: str) -> bool:
    rarest = max(inputs, key=len)
    others = [_token(literal) for literal in inputs if literal != rarest]
    expected = _token(answer)
    for line in _lines_holding(text, inputs, answer):
        if not _ASSERTION.search(line) or not all(t.search(line) for t in others):
            continue
        after = max(line.rfind("=="), line.rfind("Equal"), line.rfind("toBe"), _want_at(line))
        if after < 0:
            after = line.rfind("!=")
        if expected.search(line, after if after >= 0 else 0):
            return True
    return False


def _want_at(line: str) -> int:
    """Where the expectation of a Go failure line starts (``= "z", want "y"``), or -1."""
    found = _LAST_WANT.match(line)
    return -1 if found is None else found.start(1)


_LAST_WANT = re.compile(rf".*({_WANT})", re.DOTALL)


def _literal_seen(literal: str, history: History) -> bool:
    if SEPARATOR in literal:  # could match across two outputs joined
        return any(literal in output for output in history.outputs)
    if literal not in history.joined:
        return False
    if literal.lstrip("-").replace(".", "", 1).isdigit():
        # the separator is neither a word character nor a dot, like the start or end of text
        return bool(_token(literal).search(history.joined))
    return True
