"""What earlier calls of a session showed: earlier file contents and literals in outputs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from safeagents._detector import CallContext
from safeagents._session_text import expand_powers
from safeagents._tool_output import LINE_NUMBER
from safeagents.detectors._identity_cache import IdentityCache

__all__ = [
    "Earlier",
    "argument_seen",
    "assertion_seen",
    "call_asserted",
    "current_content",
    "earlier_content",
    "literal_seen",
    "names_of_tests",
    "output_lines",
    "pairing_seen",
    "quoted_seen",
    "recent_outputs",
    "row_answer_seen",
    "sequence_seen",
    "test_shown",
]

MAX_HISTORY_CHARS = 4_000_000
"""Output text scanned per question, newest first; older outputs are ignored."""

_NUMBERED_LINE = re.compile(rf"^\s*{LINE_NUMBER}")
_READ_FRAME = re.compile(r"^(?:</?file>|\(End of file - total \d+ lines\))$")
"""The lines opencode's read tool puts around a file's numbered lines."""
_MIN_ANCHOR = 8
_PYTHON_TEST = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(test\w*)", re.MULTILINE)
_JS_TEST = re.compile(r"^[ \t]*(?:it|test)[ \t]*\([ \t]*(['\"`])(.{1,200}?)\1", re.MULTILINE)
_SEPARATOR = "\x00"
_DIGEST_CACHE_SIZE = 256
_last_history: tuple[CallContext, tuple[int, int, int, int], _History] | None = None


def names_of_tests(text: str) -> list[str]:
    """Names of the test functions (Python ``def test_*``, JS ``it("…")``) in ``text``."""
    return _PYTHON_TEST.findall(text) + [match[1] for match in _JS_TEST.findall(text)]


def recent_outputs(context: CallContext) -> Iterator[str]:
    """Earlier tool outputs, newest first, up to :data:`MAX_HISTORY_CHARS` in all."""
    budget = MAX_HISTORY_CHARS
    for output in reversed(context.session.tool_outputs):
        if budget <= 0:
            return
        if isinstance(output, str) and output:
            yield output[:budget]
            budget -= len(output)


def strip_line_numbers(text: str) -> str:
    """Undo ``cat -n`` / read-tool numbering (``   12\\t…``, ``   12→…``, ``00012| …``) when
    every line has it, dropping the lines opencode's read tool frames a file with."""
    lines = [line for line in text.splitlines() if not _READ_FRAME.match(line)]
    code_lines = [line for line in lines if line.strip()]
    if not code_lines or not all(_NUMBERED_LINE.match(line) for line in code_lines):
        return text
    return "\n".join(_NUMBERED_LINE.sub("", line, count=1) for line in lines)


class Earlier(NamedTuple):
    """Earlier content of a file; ``exact`` when it was written whole, not read from output."""

    text: str
    exact: bool


def earlier_content(path: str, new_text: str, context: CallContext) -> Earlier | None:
    """The content ``path`` had before this call, as far as the session shows it.

    An earlier whole-file write of ``path`` wins (unless edited since); otherwise the newest
    earlier output that shares the most test names with ``new_text`` (a ``cat``/read of the
    file), or, after a read of ``path``, one that shares at least three lines with it.
    """
    history = _history(context)
    key = (path, new_text)
    if key not in history.earlier:
        history.earlier[key] = _earlier_content(path, new_text, context)
    return history.earlier[key]


def _earlier_content(path: str, new_text: str, context: CallContext) -> Earlier | None:
    for effect in reversed(context.session.effects):
        if effect.kind == "write" and effect.path == path:
            if effect.content is not None:
                return Earlier(effect.content, exact=True)
            break
    read_before = any(e.kind == "read" and e.path == path for e in context.session.effects)
    names = set(names_of_tests(new_text))
    new_lines = {line.strip() for line in new_text.splitlines() if len(line.strip()) > 3}
    best: tuple[int, int] = (0, 0)
    chosen: str | None = None
    for output in recent_outputs(context):
        digest = _digest(output)
        shared_names = len(names.intersection(digest.names))
        shared_lines = 0
        if read_before and not shared_names:
            shared_lines = len(new_lines.intersection(digest.lines()))
        if (shared_names, shared_lines) > best:
            best, chosen = (shared_names, shared_lines), digest.text
    if chosen is not None and (best[0] >= 1 or best[1] >= 3):
        return Earlier(chosen, exact=False)
    return None


def current_content(path: str, removed: str, context: CallContext) -> str | None:
    """The text ``path`` has before this call, which replaces ``removed`` in it: its last whole
    write, or the newest output holding the text the first later edit replaces (a read of the
    file), with the session's later edits of it replayed in order. ``None`` when there is no
    such text or an edit does not apply to it."""
    edits: list[tuple[str, str]] = []
    base: str | None = None
    for effect in reversed(context.session.effects):
        if effect.kind != "write" or effect.path != path:
            continue
        if effect.content is not None:
            base = effect.content
            break
        if not effect.removed or effect.added is None:
            return None
        edits.append((effect.removed, effect.added))
    edits.reverse()
    anchor = edits[0][0] if edits else removed
    if base is None:
        if len(anchor) < _MIN_ANCHOR:
            return None
        history = _history(context)
        key = (path, anchor)
        if key not in history.read:
            history.read[key] = next(
                (d.text for o in history.outputs if anchor in (d := _digest(o)).text), None
            )
        base = history.read[key]
    for old, new in edits:
        if base is None or old not in base:
            return None
        base = base.replace(old, new, 1)
    return base


def literal_seen(literal: str, context: CallContext) -> bool:
    """Whether ``literal`` (a number's digits or a string of 3+ chars) appears in outputs."""
    if len(literal) < 3 and not literal.lstrip("-").isdigit():
        return False
    history = _history(context)
    seen = history.seen.get(literal)
    if seen is None:
        seen = history.seen[literal] = _literal_seen(literal, history)
    return seen


def quoted_seen(literal: str, context: CallContext) -> bool:
    """Whether an earlier output spells the string ``literal`` in quotes, as code writes a
    string literal (``['中文', 1]``), not only bare, as it writes a name (``(?P<days>``)."""
    history = _history(context)
    key = _SEPARATOR.join(["quoted", literal])
    seen = history.seen.get(key)
    if seen is None:
        joined = history.joined
        seen = history.seen[key] = literal in joined and any(
            q + literal + q in joined for q in ("'", '"', "`")
        )
    return seen


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
    history = _history(context)
    key = _SEPARATOR.join(atoms)
    seen = history.seen.get(key)
    if seen is None:
        parts = [re.escape(atom) for atom in atoms]
        quoted = [rf"['\"]?{part}['\"]?" for part in parts]
        pattern = re.compile(r"(?<![\w.])" + _BETWEEN.join(quoted) + r"(?![\w.])")
        texts = (history.joined, history.instruction(context))
        seen = history.seen[key] = any(
            atoms[0] in text and pattern.search(text) is not None for text in texts
        )
    return seen


_ASSERTION = re.compile(r"\bassert|==|\bexpect|\bEqual|\btoBe\b|\bgot\s*!=|[,;]\s*want\b")
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
    history = _history(context)
    key = _SEPARATOR.join([*inputs, "->", answer])
    seen = history.seen.get(key)
    if seen is None:
        seen = history.seen[key] = any(
            _assertion_in(text, inputs, answer)
            for text in (history.joined, history.instruction(context))
        )
    return seen


def argument_seen(literal: str, context: CallContext) -> bool:
    """Whether an earlier output or the instruction quotes the string ``literal`` as a call's
    argument (``decomposeColor('rgb(255 0 0 / 50%)')``): an input the tests pass."""
    history = _history(context)
    key = _SEPARATOR.join(["argument", literal])
    seen = history.seen.get(key)
    if seen is None:
        quoted = re.escape(literal)
        call = re.compile(rf"[\w$\])]\s*\(\s*(['\"`]){quoted}\1")
        seen = history.seen[key] = any(
            literal in text and call.search(text) is not None
            for text in (history.joined, history.instruction(context))
        )
    return seen


def row_seen(cells: list[str], context: CallContext) -> bool:
    """Whether one line of an earlier output or of the instruction quotes each string of
    ``cells`` in this order (``['^0.2.0', '0.2.1-rc.1', {…}]`` for the key ``'^0.2.0
    0.2.1-rc.1'``): a row of the tests' fixture table, joined into one key."""
    history = _history(context)
    key = _SEPARATOR.join(["row", *cells])
    seen = history.seen.get(key)
    if seen is None:
        later = [
            rf"[^\n]*?(['\"`]){re.escape(cell)}\{index + 2}" for index, cell in enumerate(cells[1:])
        ]
        row = re.compile(rf"{re.escape(cells[0])}(['\"`])" + "".join(later))
        seen = history.seen[key] = any(
            all(cell in text for cell in cells) and _row_in(text, row)
            for text in (history.joined, history.instruction(context))
        )
    return seen


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
    history = _history(context)
    key = _SEPARATOR.join(["row-answer", *inputs, "->", answer])
    seen = history.seen.get(key)
    if seen is None:
        seen = history.seen[key] = _row_answer_in(history.joined, inputs, answer)
    return seen


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
    text = _history(context).joined
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
    history = _history(context)
    key = _SEPARATOR.join(["test", name])
    seen = history.seen.get(key)
    if seen is None:
        n = re.escape(name)
        shown = re.compile(
            rf"\bdef\s+{n}\s*\(|::{n}\b|^(?:FAIL|ERROR):\s+{n}\b|_ (?:\w+\.)?{n}[\[ ]"
            rf"|\b{n} \([\w.]+\)",
            re.MULTILINE,
        )
        seen = history.seen[key] = name in history.joined and bool(shown.search(history.joined))
    return seen


def call_asserted(name: str, context: CallContext) -> bool:
    """Whether an assertion-like line of an earlier output or of the instruction calls
    ``name`` (``assert c.area() == 6``): the tests call that function or method."""
    history = _history(context)
    key = _SEPARATOR.join(["call", name])
    seen = history.seen.get(key)
    if seen is None:
        call = _unglued(name, r"\s*\(", before=r"\w")
        seen = history.seen[key] = any(
            _call_in(text, call) for text in (history.joined, history.instruction(context))
        )
    return seen


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
    starts = [found.start() for found in _WANT.finditer(line)]
    return starts[-1] if starts else -1


_WANT = re.compile(r"[,;]\s*want\b")


def _literal_seen(literal: str, history: _History) -> bool:
    if _SEPARATOR in literal:  # could match across two outputs joined
        return any(literal in output for output in history.outputs)
    if literal not in history.joined:
        return False
    if literal.lstrip("-").replace(".", "", 1).isdigit():
        # the separator is neither a word character nor a dot, like the start or end of text
        return bool(_token(literal).search(history.joined))
    return True


class _History:
    """What one call's detectors learnt about the session's outputs, shared between them."""

    __slots__ = ("_instruction", "_joined", "earlier", "outputs", "read", "seen")

    def __init__(self, outputs: list[str]) -> None:
        self.outputs = outputs
        self._joined: str | None = None
        self._instruction: str | None = None
        self.seen: dict[str, bool] = {}
        self.earlier: dict[tuple[str, str], Earlier | None] = {}
        self.read: dict[tuple[str, str], str | None] = {}
        """The output a file was read from, by the path and the text an edit replaces."""

    @property
    def joined(self) -> str:
        """The outputs in one text, so that a literal is looked for in one pass (powers
        spelt out: ``10**6`` is looked up as ``1000000``, as the code's folded literal)."""
        if self._joined is None:
            self._joined = expand_powers(_SEPARATOR.join(self.outputs))
        return self._joined

    def instruction(self, context: CallContext) -> str:
        """The task's instruction, its powers spelt out like :attr:`joined`'s."""
        if self._instruction is None:
            self._instruction = expand_powers(context.session.model.instruction)
        return self._instruction


def _history(context: CallContext) -> _History:
    """The :class:`_History` of ``context``, made again when the session has grown."""
    global _last_history
    session = context.session
    outputs, effects = session.tool_outputs, session.effects
    shape = (
        len(outputs),
        id(outputs[-1]) if outputs else 0,
        len(effects),
        id(effects[-1]) if effects else 0,
    )
    last = _last_history
    if last is not None and last[0] is context and last[1] == shape:
        return last[2]
    history = _History(list(recent_outputs(context)))
    _last_history = (context, shape, history)
    return history


class _Digest:
    """An output with read-tool line numbers undone, and the test names it shows."""

    __slots__ = ("_lines", "names", "text")

    def __init__(self, output: str) -> None:
        self.text = strip_line_numbers(output)
        self.names = frozenset(names_of_tests(self.text))
        self._lines: frozenset[str] | None = None

    def lines(self) -> frozenset[str]:
        if self._lines is None:
            self._lines = frozenset(line.strip() for line in self.text.splitlines())
        return self._lines


_digest: IdentityCache[str, _Digest] = IdentityCache(_Digest, _DIGEST_CACHE_SIZE)
"""The digest of an output, kept while the session's outputs are asked about again."""
