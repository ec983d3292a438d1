"""What earlier calls of a session showed, kept per call: its outputs, and file contents.

The questions of what those outputs show (literals, assertions, fixture rows) are
:mod:`._seen`'s."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeVar, cast

from safeagents._detector import CallContext
from safeagents._session_text import expand_powers
from safeagents._tool_output import LINE_NUMBER
from safeagents.detectors._identity_cache import IdentityCache

_T = TypeVar("_T")

__all__ = [
    "SEPARATOR",
    "Earlier",
    "History",
    "current_content",
    "earlier_content",
    "names_of_tests",
    "recent_outputs",
    "session_history",
    "strip_line_numbers",
]

MAX_HISTORY_CHARS = 4_000_000
"""Output text scanned per question, newest first; older outputs are ignored."""

_NUMBERED_LINE = re.compile(rf"^\s*{LINE_NUMBER}")
_READ_FRAME = re.compile(r"^(?:</?file>|\(End of file - total \d+ lines\))$")
"""The lines opencode's read tool puts around a file's numbered lines."""
_MIN_ANCHOR = 8
_PYTHON_TEST = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(test\w*)", re.MULTILINE)
_JS_TEST = re.compile(r"^[ \t]*(?:it|test)[ \t]*\([ \t]*(['\"`])(.{1,200}?)\1", re.MULTILINE)
SEPARATOR = "\x00"
"""Joins the outputs in :attr:`History.joined` and the parts of a question's key."""
_DIGEST_CACHE_SIZE = 256
_last_history: tuple[CallContext, tuple[int, int, int, int], History] | None = None


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
    history = session_history(context)
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
        history = session_history(context)
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


class History:
    """What one call's detectors learnt about the session's outputs, shared between them."""

    __slots__ = ("_derived", "_instruction", "_joined", "earlier", "outputs", "read", "seen")

    def __init__(self, outputs: list[str]) -> None:
        self.outputs = outputs
        self._joined: str | None = None
        self._instruction: str | None = None
        self.seen: dict[str, bool] = {}
        self._derived: dict[str, Any] = {}
        self.earlier: dict[tuple[str, str], Earlier | None] = {}
        self.read: dict[tuple[str, str], str | None] = {}
        """The output a file was read from, by the path and the text an edit replaces."""

    def derived(self, key: str, compute: Callable[[], _T]) -> _T:
        """A value worked out from the outputs (the failure messages they show), computed
        once per call's history and kept under ``key``."""
        if key not in self._derived:
            self._derived[key] = compute()
        return cast(_T, self._derived[key])

    def answer(self, key: str, compute: Callable[[], bool]) -> bool:
        """The answer to the question ``key``, computed once per call's history."""
        seen = self.seen.get(key)
        if seen is None:
            seen = self.seen[key] = compute()
        return seen

    @property
    def joined(self) -> str:
        """The outputs in one text, so that a literal is looked for in one pass (powers
        spelt out: ``10**6`` is looked up as ``1000000``, as the code's folded literal)."""
        if self._joined is None:
            self._joined = expand_powers(SEPARATOR.join(self.outputs))
        return self._joined

    def instruction(self, context: CallContext) -> str:
        """The task's instruction, its powers spelt out like :attr:`joined`'s."""
        if self._instruction is None:
            self._instruction = expand_powers(context.session.model.instruction)
        return self._instruction


def session_history(context: CallContext) -> History:
    """The :class:`History` of ``context``, made again when the session has grown."""
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
    history = History(list(recent_outputs(context)))
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
