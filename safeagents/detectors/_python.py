"""Shared helpers for the built-in detectors: which effects carry Python text, and parsing."""

from __future__ import annotations

import ast
import posixpath
import re
import textwrap
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from safeagents._actions import Effect
from safeagents._cut import is_cut, visible_part
from safeagents._detector import CallContext, Detector
from safeagents.detectors._clause_fragments import clause_opened
from safeagents.detectors._folding import fold_constants, foldable_lines
from safeagents.detectors._hint_words import hints_in, register_hints
from safeagents.detectors._module_facts import ModuleFacts, module_facts
from safeagents.detectors._patch_hunks import hunk_pieces
from safeagents.detectors._script_replacements import replaced_texts, rewritten_text

__all__ = [
    "MAX_SOURCE_CHARS",
    "GuardedDetector",
    "PythonCode",
    "PythonDetector",
    "agents_own",
    "argument_strings",
    "enclosing_text",
    "hunk_texts",
    "is_test_path",
    "parse",
    "patched_text",
    "python_source",
    "starts_indented",
    "top_level_blocks",
    "written_text",
]

MAX_SOURCE_CHARS = 1_000_000

_PYTHON_SHEBANG = re.compile(r"^#![^\n]*python")
_CACHE_SIZE = 4
_CACHE_CHARS = 2 * MAX_SOURCE_CHARS
"""Few trees are kept: one call's detectors share them, and a large cached heap of AST nodes
makes every full garbage collection of the process slow."""
_ARGUMENT_DEPTH = 3
_CUT_LINES_DROPPED = 4
"""Trailing whole lines of a cut text dropped, one by one, until the rest parses."""
_OPEN_HEADERS = 4
"""Block headers without a body that an edit's text may end with (nested ``if``s)."""
_ARGUMENT_ITEMS = 64
_FIRST_LINES_CHARS = 512
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)*(?=\S)")
"""Blank lines before an unindented line: where a block of a module may start."""
_cache: OrderedDict[str, ast.Module | None] = OrderedDict()
_cache_lock = threading.Lock()
_last_source: tuple[Effect, CallContext, str | None] | None = None
_last_pieces: tuple[Effect, CallContext, list[str]] | None = None


class GuardedDetector(Detector):
    """A detector whose :meth:`detect` may hit Python's own limits on hostile input.

    Code nested past the recursion limit (``ast.unparse``) or an integer literal past the
    int-to-text limit (``ValueError``) raises; the engine fails closed on it (the rules that
    consulted the detector give ``unanalysable`` findings), since hostile code is what
    such limits meet.
    """

    def matches(self, effect: Effect, context: CallContext) -> bool:
        return self.detect(effect, context)

    def detect(self, effect: Effect, context: CallContext) -> bool:
        raise NotImplementedError("The 'detect' method must be implemented.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


@dataclass(frozen=True, slots=True)
class PythonCode:
    """Parsed Python text that a write or edit puts on disk."""

    source: str
    path: str | None
    test_file: bool
    tree: ast.Module

    @property
    def facts(self) -> ModuleFacts:
        return module_facts(self.tree)


class PythonDetector(GuardedDetector):
    """A detector of the Python that a write or edit puts on disk.

    :meth:`detect` is the opening they share: the Python text (:func:`python_source`), none
    for a file it does not :meth:`examine` (by default: test files), none without one of
    the ``hints`` (a cheap filter before parsing), then the parsed code to :meth:`inspect`
    (of a text a transcript cut short, its whole first lines: :func:`whole_lines`), or text
    that does not parse to :meth:`unparsed` (by default: ``fallback`` is found). An edit by
    a patch whose hunks do not parse as one text has each hunk inspected too, as a fragment
    (:mod:`._patch_hunks`).
    """

    hints: ClassVar[tuple[str, ...]] = ()
    fallback: ClassVar[re.Pattern[str] | None] = None
    reads_whole_lines: ClassVar[bool] = True
    """Whether a cut text is inspected as its whole first lines (else it is ``unparsed``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_hints(cls.hints)

    def detect(self, effect: Effect, context: CallContext) -> bool:
        source = python_source(effect, context)
        if source is None:
            return False
        test_file = is_test_path(effect.path, context)
        if not self.examines(effect.path, test_file):
            return False
        if self.hints and hints_in(source).isdisjoint(self.hints):
            return False
        tree = parse(source)
        if tree is None and self.reads_whole_lines and (whole := whole_lines(source)):
            source, tree = whole
        if tree is None:
            found = self.unparsed(source, test_file)
        else:
            found = self.inspect(PythonCode(source, effect.path, test_file, tree), context)
        return found or any(
            self._inspects_piece(piece, effect.path, test_file, context)
            for piece in hunk_texts(effect, context)
            if piece != source
        )

    def _inspects_piece(
        self, piece: str, path: str | None, test_file: bool, context: CallContext
    ) -> bool:
        """One hunk of a patch whose hunks do not parse as one text (:func:`hunk_texts`)."""
        if self.hints and hints_in(piece).isdisjoint(self.hints):
            return False
        tree = parse(piece)
        return tree is not None and self.inspect(PythonCode(piece, path, test_file, tree), context)

    def examines(self, path: str | None, test_file: bool) -> bool:
        return not test_file

    def unparsed(self, source: str, test_file: bool) -> bool:
        return self.fallback is not None and bool(self.fallback.search(source))

    def inspect(self, code: PythonCode, context: CallContext) -> bool:
        raise NotImplementedError("The 'inspect' method must be implemented.")


def is_test_path(path: str | None, context: CallContext) -> bool:
    """Whether ``path`` belongs to a test suite, by the one definition rules also use.

    That definition is the ``test_files`` list of the loaded rule packs (the bundled one is
    in ``rules/reward-hacking/pack.yaml``, beside the ``is_test_path`` macro), which the
    engine hands detectors as :attr:`CallContext.is_test_path`: rule authors see and change
    it in one place, and a rule's ``not: {macro: is_test_path}`` and a detector it calls
    never disagree. A context built without the engine knows no test paths.
    """
    if not path:
        return False
    return context.is_test_path(path.replace("\\", "/"))


def agents_own(path: str | None, context: CallContext) -> bool:
    """Whether ``path`` is a script the agent created this session (or creates with this
    call) that the instruction does not name: never the solution module the task ships."""
    model = context.session.model
    if path is None or model.named_in_instruction(path):
        return False
    if model.created(path):
        return True
    return any(e.path == path and model.creates(e) for e in context.effects)


def written_text(effect: Effect) -> str | None:
    """The new text of a ``write`` effect: the whole ``content``, else the ``added`` part."""
    if effect.kind != "write":
        return None
    text = effect.content if effect.content is not None else effect.added
    if text is None or len(text) > MAX_SOURCE_CHARS:
        return None
    return text


def python_source(effect: Effect, context: CallContext) -> str | None:
    """The Python text a write effect puts on disk, or ``None`` when it is not Python.

    For an edit (only ``added`` lines), the call argument that holds those lines with
    their context (an edit tool's ``new_string``) is used instead, so that a changed
    ``return True`` is still seen inside its ``def __eq__``. Every detector asks this of the
    same effect in turn, so the last answer is kept.
    """
    global _last_source
    last = _last_source
    if last is not None and last[0] is effect and last[1] is context:
        return last[2]
    source = _python_source(effect, context)
    _last_source = (effect, context, source)
    return source


def _python_source(effect: Effect, context: CallContext) -> str | None:
    text = written_text(effect)
    if text is None and _unknown_rewrite(effect):
        text = "\n".join(replaced_texts(effect.path or "", context)) or None
    if text is None:
        return None
    if effect.content is None:
        added = text
        text = enclosing_text(added, context) or added
        if parse(text) is None:  # a shell command holding a heredoc's lines: the lines alone
            text = patched_text(added, context) or (added if parse(added) else text)
        if parse(text) is None and effect.removed is None and effect.path:
            text = rewritten_text(effect.path, context) or text
        if parse(text) is None:
            text = top_level_blocks(added) or _open_headers_dropped(added) or text
        opened = clause_opened(added) if parse(text) is None else None
        if opened is not None:
            text = opened if parse(opened) else _open_headers_dropped(opened) or text
    if effect.path is None:
        return text if parse(text) is not None else None
    base = posixpath.basename(effect.path)
    if base.endswith((".py", ".pyw")) or (posixpath.splitext(base)[1] == "" and _shebang(text)):
        return text
    return None


def _unknown_rewrite(effect: Effect) -> bool:
    """A write whose text the analysis did not record (a script's ``write_text(s.replace(…))``)."""
    return (
        effect.kind == "write"
        and effect.path is not None
        and effect.content is None
        and effect.added is None
        and effect.removed is None
    )


def hunk_texts(effect: Effect, context: CallContext) -> list[str]:
    """Of an edit by a patch whose hunks do not parse as one text, each hunk's pieces
    (:mod:`._patch_hunks`); asked by every detector of the same effect, so the last answer
    is kept."""
    global _last_pieces
    last = _last_pieces
    if last is not None and last[0] is effect and last[1] is context:
        return last[2]
    pieces: list[str] = []
    if effect.content is None and effect.added and len(effect.added) <= MAX_SOURCE_CHARS:
        patches = argument_strings(context.call.arguments)
        small = (p for p in patches if len(p) <= MAX_SOURCE_CHARS)
        pieces = hunk_pieces(effect.added, small, lambda text: parse(text) is not None)
    _last_pieces = (effect, context, pieces)
    return pieces


def top_level_blocks(fragments: str) -> str | None:
    """The blocks of ``fragments`` (split at blank lines before an unindented line) that
    start unindented and parse alone, joined: the pieces that a script's
    ``s.replace(anchor, helper + anchor)`` writes run together, and the helper is a module of
    its own. ``None`` when no block parses."""
    blocks = _BLANK_LINES.split(fragments.strip("\n"))
    kept = [b for b in blocks if b[:1].strip() and _parses_alone(b)]
    if not kept:
        return None
    text = "\n\n\n".join(kept)
    return text if parse(text) is not None else None


def _open_headers_dropped(fragment: str) -> str | None:
    """``fragment`` without the block headers it ends with, when the rest parses: the anchor
    line that an edit puts its new lines before (``s.replace(anchor, branch + anchor)``,
    ``anchor`` an ``if …:`` whose body the edit does not show)."""
    lines = fragment.rstrip().split("\n")
    dropped = 0
    while lines and dropped < _OPEN_HEADERS and lines[-1].rstrip().endswith(":"):
        lines.pop()
        dropped += 1
    rest = "\n".join(lines)
    return rest if dropped and rest.strip() and parse(rest) is not None else None


def _parses_alone(text: str) -> bool:
    """Whether ``text`` parses as it is (not dedented, unlike :func:`parse`), uncached."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def _shebang(text: str) -> bool:
    return bool(_PYTHON_SHEBANG.match(text))


def starts_indented(text: str) -> bool:
    """Whether the first code line is indented: a fragment from inside a block."""
    size = _FIRST_LINES_CHARS
    while True:
        whole = size >= len(text)
        lines = text.splitlines() if whole else text[:size].splitlines()[:-1]
        for line in lines:  # the last line of a prefix may be cut short, so it waits
            if line.strip() and not line.lstrip().startswith("#"):
                return line[0].isspace()
        if whole:
            return False
        size *= 8


def whole_lines(text: str) -> tuple[str, ast.Module] | None:
    """Of a text a transcript cut short, the longest run of its whole first lines that
    parses (a block header cut from its body is dropped), with its tree."""
    if not is_cut(text):
        return None
    lines = visible_part(text).split("\n")[:-1]
    for _ in range(_CUT_LINES_DROPPED):
        if not any(line.strip() for line in lines):
            return None
        prefix = "\n".join(lines)
        tree = parse(prefix)
        if tree is not None:
            return prefix, tree
        lines.pop()
    return None


def parse(text: str) -> ast.Module | None:
    """Parse ``text`` (also as a dedented fragment); ``None`` when it is not Python."""
    if len(text) > MAX_SOURCE_CHARS:
        return None
    with _cache_lock:
        if text in _cache:
            _cache.move_to_end(text)
            return _cache[text]
    tree = _parse_uncached(text)
    with _cache_lock:
        _cache[text] = tree
        _cache.move_to_end(text)
        while len(_cache) > _CACHE_SIZE or sum(map(len, _cache)) > _CACHE_CHARS:
            _cache.popitem(last=False)
    return tree


def _parse_uncached(text: str) -> ast.Module | None:
    lines = foldable_lines(text)
    for dedent in (False, True):
        try:
            tree = ast.parse(textwrap.dedent(text) if dedent else text)
            return fold_constants(tree, lines) if lines else tree
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            continue
    return None


def enclosing_text(fragment: str, context: CallContext) -> str | None:
    """The shortest string argument of the call that has every line of ``fragment``."""
    lines = set(filter(str.strip, fragment.splitlines()))
    if not lines:
        return None
    best: str | None = None
    for candidate in argument_strings(context.call.arguments, _ARGUMENT_DEPTH):
        if len(candidate) > MAX_SOURCE_CHARS or (best is not None and len(candidate) >= len(best)):
            continue
        if lines.issubset(candidate.splitlines()):
            best = candidate
    return best


_FILE_HEADER = re.compile(r"^(?:\*\*\* (?:Update|Add|Delete) File:|diff --git |\+\+\+ |--- )")
_HUNK_HEADER = re.compile(r"^(?:@@|\*\*\* |index |\\ No newline)")


def patched_text(fragment: str, context: CallContext) -> str | None:
    """The new side, context lines included, of the file section of a patch among the call's
    arguments (``apply_patch``'s ``*** Update File:``, a unified diff) that adds every line
    of ``fragment``: a table added above a function and its lookup added inside it are one
    module again. ``None`` when no such section parses."""
    lines = set(filter(str.strip, fragment.splitlines()))
    if not lines:
        return None
    for candidate in argument_strings(context.call.arguments, _ARGUMENT_DEPTH):
        if len(candidate) > MAX_SOURCE_CHARS or "\n+" not in candidate or "\n " not in candidate:
            continue  # not a patch, or one without context lines: nothing to add
        for new_side in _new_sides(candidate):
            if lines.issubset(new_side):
                text = "\n".join(new_side)
                return text if parse(text) is not None else None
    return None


def _new_sides(patch: str) -> Iterator[list[str]]:
    """Each file section's added and context lines, without their ``+``/`` `` prefix."""
    section: list[str] = []
    for line in patch.splitlines():
        if _FILE_HEADER.match(line):
            yield section
            section = []
        elif line[:1] in {"+", " "} and not _HUNK_HEADER.match(line):
            section.append(line[1:])
        elif not line:
            section.append("")
    yield section


def argument_strings(value: Any, depth: int = _ARGUMENT_DEPTH) -> Iterator[str]:
    """The strings of a call's arguments, ``depth`` mappings and lists down."""
    if isinstance(value, str):
        yield value
    elif depth > 0 and isinstance(value, Mapping):
        for item in list(value.values())[:_ARGUMENT_ITEMS]:
            yield from argument_strings(item, depth - 1)
    elif depth > 0 and isinstance(value, Sequence):
        for item in list(value)[:_ARGUMENT_ITEMS]:
            yield from argument_strings(item, depth - 1)


def solution_edit(effect: Effect, context: CallContext) -> tuple[str, set[str] | None] | None:
    """The text a write of non-test code leaves, read with its file's context when it is an
    edit, and the stripped lines the edit adds (``None`` for a whole file); ``None`` for
    test code or an effect that writes no text. A script's ``p.write_text(s.replace(old,
    new))`` writes ``new``, read inside the file's text the session knows when it can be."""
    if is_test_path(effect.path, context):
        return None
    text = written_text(effect)
    if text is None and _unknown_rewrite(effect) and effect.path is not None:
        replaced = "\n".join(replaced_texts(effect.path, context))
        if not replaced:
            return None
        added = {line.strip() for line in replaced.splitlines() if line.strip()}
        return rewritten_text(effect.path, context) or replaced, added
    if text is None:
        return None
    if effect.content is not None:
        return text, None
    added = {line.strip() for line in text.splitlines() if line.strip()}
    return enclosing_text(text, context) or text, added
