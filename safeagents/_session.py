"""What a session has revealed so far, built one event at a time for rules and detectors.

The model answers questions about provenance (did a file exist before the agent arrived, or
did the agent create it this session?), about the task (its instruction, the paths it names)
and about the tests (literals of the assertions the agent read, and of the instruction).

It is fed in order with :meth:`SessionModel.observe_user` (user messages: those before the
agent's first tool call are the instruction), :meth:`SessionModel.begin_call` and
:meth:`SessionModel.observe_effect` (each tool call and its effects, after they were checked)
and :meth:`SessionModel.observe_output` (each tool result). Every event costs time in its own
size only; every question is a few set look-ups, whatever the session's length.
:meth:`SessionModel.fork` gives a copy to extend privately in constant time.

Unknown provenance is never "created": only a whole-file write (or a copy onto it: ``cp``,
``cat a > b``) of a path with no earlier sign of existence (a read, an edit, a listing or
output naming it, the instruction naming it) counts as the agent creating it; ``touch``
does not (an existing file keeps its content). A bare file name names a path in the working
directory, or anywhere but a temp directory outside it: ``/tmp/repro/test_foo.py`` is the
agent's copy of an example the instruction shows as ``test_foo.py``.
"""

from __future__ import annotations

import posixpath
import re
from collections import deque
from collections.abc import Iterable

from safeagents._actions import Effect, normalise_path
from safeagents._impossible import AssertLedger, Conflict, shows_pass
from safeagents._session_text import (
    MAX_SCANNED_CHARS,
    assert_literals,
    line_key,
    path_names,
    urls,
)

__all__ = ["SessionModel"]

MAX_PENDING_CALLS = 64
"""Calls waiting for their output; an older one is forgotten (its output is not attributed)."""
MAX_OWN_LINE_CHARS = 400
"""A longer line the agent writes is not remembered as its own (nor looked up as such)."""

_FILE_NAME = re.compile(r"[^/.]\.[A-Za-z]\w{0,9}$")
_GIT_TRACKED = re.compile(
    r"^[ \t]*(?:modified|deleted):[ \t]+(\S+)[ \t]*$|^(?:[ MD][MD]|[MD] ) (\S+)[ \t]*$",
    re.MULTILINE,
)
"""`git status` lines (long or short form) of a tracked file changed or deleted in the
checkout: it was there before the session."""
_ASSERTING = ("assert", "expect", "should", ".fail")
"""Words of text that may hold an assertion (the lines of a write are remembered only then)."""
_FROM_SOURCE = 1
"""A pending call read a file that was there before the agent: its output shows sources."""
_PART_OF_SUITE = 2
"""A pending call runs the agent's own test files, or selected tests only (``-k``,
``file::test``): its passes are not the task's suite passing."""
_TEMP_DIRS = ("/tmp/", "/var/tmp/")
_TEST_RUNNERS = frozenset({"pytest", "py.test", "unittest"})
_SELECTING = ("-k", "--deselect", "--lf", "--last-failed")


class _Facts:
    """One layer of facts; a fork's layer sits on its parent's and is looked up first."""

    __slots__ = (
        "contradicted",
        "created",
        "existing",
        "fetches",
        "instruction_literals",
        "names",
        "own_lines",
        "parent",
        "project_urls",
        "test_literals",
    )

    def __init__(self, parent: _Facts | None = None) -> None:
        self.parent = parent
        self.created: set[str] = set()
        self.contradicted: set[str] = set()
        self.existing: set[str] = set()
        self.fetches: set[tuple[str, ...]] = set()
        self.names: set[str] = set()
        self.test_literals: set[str] = set()
        self.instruction_literals: set[str] = set()
        self.own_lines: set[str] = set()
        self.project_urls: set[str] = set()


def _has(facts: _Facts | None, kind: str, key: str) -> bool:
    while facts is not None:
        if key in getattr(facts, kind):
            return True
        facts = facts.parent
    return False


class SessionModel:
    """What one session revealed about its files, its task and its tests (see the module)."""

    __slots__ = (
        "_asserts",
        "_call_cwd",
        "_copying",
        "_facts",
        "_impossible",
        "_impossible_keys",
        "_instruction_names",
        "_pending",
        "_revealed",
        "_started",
        "cwd",
        "instruction",
        "passed_impossible",
    )

    def __init__(self, cwd: str = "/workspace") -> None:
        self.cwd = cwd
        self.instruction = ""
        """The task's instruction: the user messages before the agent's first tool call
        (a harness may send its context first, as codex does), "" before any."""
        self._instruction_names: frozenset[str] = frozenset()
        self._started = False
        self._facts = _Facts()
        self._pending: deque[int] = deque(maxlen=MAX_PENDING_CALLS)
        self._copying: str | None = None
        self._call_cwd: str | None = None
        """Where the current call's commands run after its ``cd``, when it has one."""
        self._revealed: list[str] = []
        self._asserts = AssertLedger()
        self._impossible: list[Conflict] = []
        self._impossible_keys: set[Conflict] = set()
        self.passed_impossible: Conflict | None = None
        """Set only on the fork that re-checks a call after :meth:`take_impossible` gave
        this conflict: the tests it asserts passed."""

    def fork(self) -> SessionModel:
        """A copy that can be extended without changing this model (constant time)."""
        child = SessionModel(self.cwd)
        child.instruction = self.instruction
        child._instruction_names = self._instruction_names
        child._started = self._started
        child._facts = _Facts(self._facts)
        child._pending = deque(self._pending, maxlen=MAX_PENDING_CALLS)
        child._revealed = self._revealed  # one queue: taken once, from whichever copy
        child._asserts = self._asserts.fork()
        child._impossible = self._impossible
        child._impossible_keys = self._impossible_keys
        return child

    # -- feeding -------------------------------------------------------------------------

    def observe_user(self, text: str) -> None:
        """A user message: before the agent's first tool call, part of the instruction; a
        later one may be a tool's output (mini-swe-agent sends results as user messages)."""
        if not self._started:
            self.instruction = f"{self.instruction}\n{text}" if self.instruction else text
            names = path_names(text)
            self._instruction_names = self._instruction_names | names
            self._facts.names.update(names)
            self._facts.instruction_literals.update(assert_literals(text))
            self._facts.project_urls.update(urls(text))
            self._asserts.observe(text[:MAX_SCANNED_CHARS])
        elif self._pending:
            self.observe_output(text)
        else:
            self._facts.names.update(path_names(text))

    def begin_call(self, cwd: str | None = None) -> None:
        """A tool call (run in ``cwd`` when given) starts; its effects follow, its output
        comes later."""
        if cwd:
            self.cwd = cwd
        self._started = True
        self._copying = None
        self._call_cwd = None
        self._pending.append(0)

    def observe_effect(self, effect: Effect) -> None:
        """An effect of the current call, after it was checked."""
        path = effect.path
        copying, self._copying = self._copying, None
        if effect.kind == "exec" and effect.argv0 is not None:
            if len(effect.argv) == 2 and effect.argv[0] == "cd":
                self._call_cwd = normalise_path(effect.argv[1], self._call_cwd or self.cwd)
            self._made_directories(effect.argv)
            if "download" in effect.argv or "pack" in effect.argv:
                self._facts.fetches.add(effect.argv)
            if self._pending and self._runs_part_of_suite(effect.argv):
                self._pending[-1] |= _PART_OF_SUITE
        if path is None:
            return
        if effect.kind in ("read", "search"):
            if effect.kind == "read":  # a write right after it: a copy (`cp`) of ``path``
                self._copying = path
            if not self.created(path):
                self._mark_existing(path)
                if self._pending:
                    self._pending[-1] |= _FROM_SOURCE
        elif effect.kind == "write":
            self._remember_lines(effect)
            if not self._known(path):
                if self.creates(effect) or (copying and self._copies(effect, copying)):
                    self._facts.created.add(path)
                else:
                    self._mark_existing(path)
        elif effect.kind in ("delete", "move"):
            created = self.created(path)
            if not created:
                self._mark_existing(path)
            if effect.kind == "move" and effect.dest is not None and not self._known(effect.dest):
                if created:
                    self._facts.created.add(effect.dest)
                else:
                    self._mark_existing(effect.dest)

    def observe_output(self, text: str) -> None:
        """The output of the oldest call still waiting for one."""
        self._started = True
        flags = self._pending.popleft() if self._pending else 0
        self._facts.names.update(path_names(text))
        scanned = text[:MAX_SCANNED_CHARS]
        if not flags & _PART_OF_SUITE and shows_pass(scanned):
            conflict = self._asserts.conflict()
            if conflict is not None and conflict not in self._impossible_keys:
                self._impossible_keys.add(conflict)
                self._impossible.append(conflict)
        if flags & _FROM_SOURCE:
            self._facts.test_literals.update(assert_literals(text))
            self._facts.project_urls.update(urls(scanned))
            self._asserts.observe(scanned)
        self._reveal(text)

    def take_revealed(self) -> list[str]:
        """Paths the agent was taken to have created that an output has since shown were
        there before the session (git reports them as tracked files it changed or deleted);
        each is given once. Calls on them ran under the wrong provenance: re-check them."""
        revealed = list(self._revealed)
        self._revealed.clear()
        return revealed

    def take_impossible(self) -> list[Conflict]:
        """Conflicting assertions of the tests (one call, two expected values) that an
        output has since shown passing; each is given once."""
        taken = list(self._impossible)
        self._impossible.clear()
        return taken

    # -- questions -----------------------------------------------------------------------

    def created(self, path: str) -> bool:
        """Whether the agent created ``path`` (or a directory above it) this session."""
        if _has(self._facts, "contradicted", path):
            return False
        return any(_has(self._facts, "created", p) for p in _self_and_parents(path, self.cwd))

    def preexisting(self, path: str) -> bool:
        """Whether ``path`` counts as there before the agent: any path it did not create."""
        return not self.created(path)

    def seen_existing(self, path: str) -> bool:
        """Whether the session showed ``path`` existing before the agent wrote it (a read,
        an edit, a listing or output naming it, the instruction naming it)."""
        return _has(self._facts, "existing", path) or self._named(path)

    def creates(self, effect: Effect) -> bool:
        """Whether ``effect`` (not yet observed) creates its file: a whole-file write of a
        path that neither the agent created nor the session showed before, or a copy onto
        such a path (the read of this call's ``cp`` was observed just before)."""
        path = effect.path
        if effect.kind != "write" or path is None or self._known(path):
            return False
        if self._copying is not None and self._copies(effect, self._copying):
            return True
        return _creates(effect) and not self._named(path)

    def project_names_url(self, url: str) -> bool:
        """Whether ``url`` is one the task gave: its instruction, or a file that was there
        before the agent (a README's "fetch with curl …"), showed it as written."""
        return _has(self._facts, "project_urls", url.rstrip(".,;:"))

    def fetch_commands(self) -> list[tuple[str, ...]]:
        """Earlier command lines that may fetch a package: ``download`` or ``pack`` among
        their words (``pip download NAME``, ``npm pack NAME@V``)."""
        found: list[tuple[str, ...]] = []
        facts: _Facts | None = self._facts
        while facts is not None:
            found.extend(facts.fetches)
            facts = facts.parent
        return found

    def named_in_instruction(self, path: str) -> bool:
        """Whether the instruction names ``path`` (relative to the working directory or by
        its file name, see :meth:`_bare_name_reaches`)."""
        names = self._instruction_names
        if self._relative(path) in names:
            return True
        return self._bare_name_reaches(path) and posixpath.basename(path) in names

    def wrote_line(self, path: str, line: str) -> bool:
        """Whether the agent itself put ``line`` (compared by :func:`line_key`) into ``path``
        this session: added by an edit or an append, or written in a file it created, by a
        write whose text holds an assertion (only assertion lines are asked about)."""
        key = line_key(line)
        if not 0 < len(key) <= MAX_OWN_LINE_CHARS:
            return False
        return _has(self._facts, "own_lines", f"{path}\n{key}")

    def in_working_directory(self, path: str, cwd: str | None = None) -> bool:
        """Whether ``path`` is the session's working directory or below it, or ``cwd`` (the
        call's own) or below it."""
        return any(_at_or_below(path, directory) for directory in (self.cwd, cwd) if directory)

    def task_file_directory(self, path: str) -> tuple[str, str] | None:
        """Where the task's files are, and the name the instruction gives ``path`` by, when
        ``path`` (read, not created) is one the instruction names by a relative file name
        (``func.py``, ``tests/test_a.py``, the longest that fits) and lies outside the
        working directory: where the task runs, when no working directory was stated."""
        if not _FILE_NAME.search(path) or _at_or_below(path, self.cwd) or self.created(path):
            return None
        parts = path.split("/")
        for start in range(max(len(parts) - 4, 1), len(parts)):  # the longest name first
            name = "/".join(parts[start:])
            if name in self._instruction_names:
                return "/".join(parts[:start]) or "/", name
        return None

    def is_task_test(self, path: str, is_test_path: bool) -> bool:
        """Whether ``path`` (a test file when ``is_test_path``) is one of the task's tests:
        one the agent did not create, or one the instruction names."""
        return is_test_path and (not self.created(path) or self.named_in_instruction(path))

    def literal_source(self, literal: str) -> str | None:
        """Where ``literal`` (as :func:`assert_literals` writes it) was seen: ``"test"`` (an
        assertion of a file the agent read), ``"instruction"``, or ``None``."""
        if _has(self._facts, "test_literals", literal):
            return "test"
        if _has(self._facts, "instruction_literals", literal):
            return "instruction"
        return None

    def test_literals(self) -> frozenset[str]:
        """Every assertion literal seen, in tests read and in the instruction."""
        found: set[str] = set()
        facts: _Facts | None = self._facts
        while facts is not None:
            found |= facts.test_literals | facts.instruction_literals
            facts = facts.parent
        return frozenset(found)

    # -- internals -----------------------------------------------------------------------

    def _reveal(self, text: str) -> None:
        for long_form, short_form in _GIT_TRACKED.findall(text[:MAX_SCANNED_CHARS]):
            path = posixpath.normpath(posixpath.join(self.cwd, long_form or short_form))
            if _has(self._facts, "created", path) and self.created(path):
                self._facts.contradicted.add(path)
                self._mark_existing(path)
                self._revealed.append(path)

    def _runs_part_of_suite(self, argv: tuple[str, ...]) -> bool:
        """Whether ``argv`` runs a test runner on selected tests only, or on files the agent
        created and only those."""
        if not any(posixpath.basename(a) in _TEST_RUNNERS for a in argv[:4]):
            return False
        if any(a in _SELECTING or a.startswith(_SELECTING) or "::" in a for a in argv):
            return True
        files = [a for a in argv[1:] if a.endswith(".py") and not a.startswith("-")]
        cwd = self._call_cwd or self.cwd
        return bool(files) and all(
            self.created(posixpath.normpath(posixpath.join(cwd, a))) for a in files
        )

    def _remember_lines(self, effect: Effect) -> None:
        """The lines a write adds (an edit's new lines not among its old ones, an append, or
        the whole content of a file this write creates): the agent's own from now on."""
        if effect.content is not None:
            if not self.creates(effect):
                return  # a whole-file write of a file it did not make: whose lines is unknown
            text, old = effect.content, ""
        elif effect.added is not None:
            text, old = effect.added, effect.removed or ""
        else:
            return
        text = text[:MAX_SCANNED_CHARS]
        if not any(word in text for word in _ASSERTING):
            return  # only assertions are ever asked about: nothing to remember
        kept = {line_key(line) for line in old[:MAX_SCANNED_CHARS].splitlines()}
        keys = {line_key(line) for line in text.splitlines()} - kept
        prefix = f"{effect.path}\n"
        self._facts.own_lines.update(
            prefix + key for key in keys if key and len(key) <= MAX_OWN_LINE_CHARS
        )

    def _known(self, path: str) -> bool:
        return _has(self._facts, "existing", path) or _has(self._facts, "created", path)

    def _copies(self, effect: Effect, source: str) -> bool:
        """A write of unknown content, right after a read of ``source`` in the same call
        (``cp a b``, ``cat a > b``, ``sed -n 1,9p a > b``), to a path the session never
        showed: a copy replaces all of ``b`` as a whole-file write does, so ``b`` is the
        agent's. For a copy of the agent's own file only the path counts as shown (its file
        name the session may well have shown as the source's)."""
        path = effect.path
        if path is None or effect.content is not None:
            return False
        if not self.created(source):
            return not self._named(path)
        return not _has(self._facts, "names", self._relative(path)) and not _has(
            self._facts, "names", path
        )

    def _made_directories(self, argv: tuple[str, ...]) -> None:
        """``mkdir DIR`` without ``-p`` fails on an existing directory: a DIR the session never
        showed is the agent's, and so is all below it. (``mkdir -p`` proves nothing, nor does
        a file written into a directory never shown: ``tests/`` may well be there.)"""
        if not argv or posixpath.basename(argv[0]) != "mkdir":
            return
        operands: list[str] = []
        words = iter(argv[1:])
        for word in words:
            if word in ("-p", "--parents") or (word[:1] == "-" != word[1:2] and "p" in word):
                return
            if word in ("-m", "--mode", "-Z", "--context"):
                next(words, None)
            elif not word.startswith("-"):
                operands.append(word)
        for operand in operands:
            path = posixpath.normpath(posixpath.join(self.cwd, operand))
            if not self._known(path) and not self._named(path):
                self._facts.created.add(path)

    def _mark_existing(self, path: str) -> None:
        """``path`` was there before the agent, and so were its directories (a new file
        beside an existing one does not make their top directory the agent's)."""
        for known in _self_and_parents(path, self.cwd):
            if _has(self._facts, "existing", known):
                return
            self._facts.existing.add(known)

    def _named(self, path: str) -> bool:
        bare = self._bare_name_reaches(path) and _has(
            self._facts, "names", posixpath.basename(path)
        )
        return (
            bare
            or _has(self._facts, "names", self._relative(path))
            or _has(self._facts, "names", path)
        )

    def _bare_name_reaches(self, path: str) -> bool:
        """Whether a bare file name can name ``path``: not one in a temp directory outside
        the working directory."""
        return path.startswith(self.cwd.rstrip("/") + "/") or not path.startswith(_TEMP_DIRS)

    def _relative(self, path: str) -> str:
        prefix = self.cwd.rstrip("/") + "/"
        return path[len(prefix) :] if path.startswith(prefix) else path


def _creates(effect: Effect) -> bool:
    """A write that can create its file: a new file, or whole non-empty content."""
    if effect.new_file:
        return True
    return bool(effect.content) and effect.removed is None


def _at_or_below(path: str, directory: str) -> bool:
    root = directory.rstrip("/")
    return bool(root) and (path == root or path.startswith(f"{root}/"))


def _self_and_parents(path: str, cwd: str) -> Iterable[str]:
    """``path`` and its directories below ``cwd`` (the working directory itself excluded)."""
    yield path
    stop = cwd.rstrip("/") or "/"
    parent = posixpath.dirname(path)
    while parent not in (stop, "/", "") and parent.startswith(stop + "/"):
        yield parent
        parent = posixpath.dirname(parent)
