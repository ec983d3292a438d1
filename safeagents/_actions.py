"""Canonical actions: the one vocabulary every rule speaks.

A harness plugin turns each tool call into a list of :class:`Effect` values. Rules
never see harness tool names unless they ask for them (the ``tool`` and ``harness``
match fields).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

__all__ = [
    "EFFECT_FIELDS",
    "EFFECT_KINDS",
    "FIELD_DOCS",
    "MAX_ARGUMENT_DEPTH",
    "UNANALYSABLE_REASONS",
    "AnalysisContext",
    "Effect",
    "EffectKind",
    "ToolCall",
    "decode_arguments",
    "json_too_deep",
    "normalise_path",
    "said_effects",
    "without_surrogates",
]

MAX_ARGUMENT_DEPTH = 100
"""Tool-call arguments nested deeper than this stay undecoded text (no analyser reads them)."""


def json_too_deep(value: Any, limit: int) -> bool:
    """Whether a decoded JSON value nests lists and objects more than ``limit`` levels deep
    (a scalar is level 0, ``[]`` and ``{}`` level 1); iterative, so any depth is safe."""
    level: list[Any] = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:  # one level at a time: the fastest walk in CPython
            for child in item.values() if type(item) is dict else item:
                if type(child) is dict or type(child) is list:
                    below.append(child)
        level = below
    return False


_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (a ``\\ud800`` escape JSON decodes, which UTF-8 and
    so RE2 cannot encode) replaced by U+FFFD: what the analysers read; other text as is."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


def _without_surrogates(value: Any) -> Any:
    """A decoded JSON value with :func:`without_surrogates` applied to every string in it
    (the same object when none changes; decoded arguments nest at most 100 deep)."""
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, Mapping):
        items = [(_without_surrogates(k), _without_surrogates(v)) for k, v in value.items()]
        if all(k is a and v is b for (k, v), (a, b) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list):
        elements = [_without_surrogates(element) for element in value]
        if all(a is b for a, b in zip(elements, value, strict=True)):
            return value
        return elements
    return value


def decode_arguments(text: str) -> Any:
    """``text`` decoded as JSON, or ``text`` itself (the same object) when it is not JSON
    nested at most :data:`MAX_ARGUMENT_DEPTH` deep. The depth is read from the text first,
    so the outcome never depends on how deep the caller's stack is."""
    return _decode_checked(text)[0]


def _decode_checked(text: str) -> tuple[Any, str | None]:
    """:func:`decode_arguments`, and why the text stayed undecoded (``None`` when it did not)."""
    if not text.strip():
        return {}, None
    if text.count("[") + text.count("{") > MAX_ARGUMENT_DEPTH and _text_too_deep(text):
        return text, f"nested more than {MAX_ARGUMENT_DEPTH} levels deep"
    try:
        return json.loads(text), None
    except ValueError as exc:
        return text, str(exc)
    except RecursionError:
        return text, "nested too deeply"


def _text_too_deep(text: str) -> bool:
    depth = 0
    for bracket in _BRACKETS.findall(_JSON_STRINGS.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_ARGUMENT_DEPTH:
            return True
    return False


_JSON_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*+"')
_BRACKETS = re.compile(r"[\[\]{}]")

EffectKind = Literal["exec", "read", "write", "delete", "move", "network", "search", "say"]
EFFECT_KINDS: tuple[EffectKind, ...] = (
    "exec",
    "read",
    "write",
    "delete",
    "move",
    "network",
    "search",
    "say",
)
"""``say`` is one sentence of the model's own text (content or reasoning) in its ``text``;
the firewall makes them (:func:`said_effects`), never a harness plugin."""

EFFECT_FIELDS: Mapping[EffectKind, tuple[str, ...]] = {
    "exec": ("argv0", "argv", "command", "opaque", "own_repo", "unanalysable"),
    "read": ("path",),
    "write": ("path", "content", "added", "removed", "new_file", "command"),
    "delete": ("path",),
    "move": ("path", "dest"),
    "network": ("url", "host", "pattern"),
    "search": ("pattern", "path"),
    "say": ("text",),
}
"""The :class:`Effect` fields each kind can carry; the others stay empty on it."""

FIELD_DOCS: Mapping[str, str] = {
    "path": "the file or directory acted on: absolute, with `..`, `~` and `$HOME` resolved "
    "against the call's working directory",
    "dest": "where a `move` puts `path`",
    "content": "the whole new text of the file, when the call replaces it (a full write, "
    "`> file`); absent for an edit",
    "added": "the text the call adds (a new file's content, an edit's new text, a patch's "
    "`+` lines)",
    "removed": "the text the call takes out (an edit's old text, a patch's `-` lines)",
    "new_file": "true when the write creates the file",
    "command": "the command text; on a `write`, the program that edits the file in place "
    "(a `sed -i` expression, `perl -i` code)",
    "argv0": "the program run, as the command's first word names it",
    "argv": "every word of the command, `argv0` first; a matcher holds when any word matches",
    "opaque": "true when the command could not be resolved statically (`$(…)`, `eval`, "
    "decoded text piped into a shell)",
    "own_repo": "true on a `git` command run in a repository the same command created "
    "(`git init` in a directory `mktemp -d` made) and brought no "
    "other history into (`fetch`, `remote`, `--git-dir`, `GIT_DIR`)",
    "unanalysable": "why the analysis gave up: `budget`, `error` or `arguments` (absent when "
    "it did not)",
    "url": "the URL fetched, cloned or sent to",
    "host": "the host of `url` (or the one a command connects to)",
    "pattern": "the search pattern (`search`); the query of a web search (`network`)",
    "text": "one sentence of what the model said in the turn (its content or reasoning); "
    'see "The model\'s own words"',
}
"""What each :class:`Effect` field holds, for the rule DSL's reference."""

UNANALYSABLE_REASONS = {
    "budget": "run a command too long or too deeply nested to check",
    "error": "run a command the analysers failed on",
    "arguments": "pass arguments that are not valid JSON",
}
"""Why an analysis gave up (:attr:`Effect.unanalysable`), as :meth:`Effect.describe` says it."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as the model emitted it, in any harness's schema.

    ``arguments_error`` says why arguments sent as a JSON string (the OpenAI dialects) did not
    decode; ``arguments`` then holds the raw text, and the call is never analysed as such.
    """

    id: str
    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    arguments_error: str | None = None

    @classmethod
    def from_openai(cls, raw: Mapping[str, Any]) -> ToolCall:
        """Build from an OpenAI chat ``tool_calls`` entry; arguments may be a JSON string."""
        function = raw.get("function") or {}
        name = str(function.get("name") or raw.get("name") or "")
        arguments: Any = function.get("arguments", raw.get("arguments", {}))
        error: str | None = None
        if isinstance(arguments, str):
            arguments, error = _decode_checked(arguments)
        if not isinstance(arguments, (Mapping, str)):
            arguments = {"value": arguments}
        call_id = str(raw.get("id") or "")
        return cls(id=call_id, name=name, arguments=arguments, arguments_error=error)

    def analysable(self) -> ToolCall:
        """This call with :func:`without_surrogates` applied to its name and arguments (itself
        when they have none)."""
        name, arguments = without_surrogates(self.name), _without_surrogates(self.arguments)
        if name is self.name and arguments is self.arguments:
            return self
        return replace(self, name=name, arguments=arguments)

    def argument(self, *names: str) -> Any:
        """The first present argument among ``names`` (aliases), else ``None``."""
        if not isinstance(self.arguments, Mapping):
            return None
        for name in names:
            value = self.arguments.get(name)
            if value is not None:
                return value
        return None


@dataclass(frozen=True, slots=True)
class AnalysisContext:
    """Where a call runs: paths are resolved against ``cwd``, ``~`` against ``home``."""

    cwd: str = "/workspace"
    home: str = "/root"

    def resolve(self, path: str) -> str:
        return normalise_path(path, self.cwd, self.home)

    def chdir(self, path: str) -> AnalysisContext:
        return replace(self, cwd=self.resolve(path))


def normalise_path(path: str, cwd: str = "/workspace", home: str = "/root") -> str:
    """Absolute, ``..``-free form of ``path`` so that no spelling evades a rule."""
    path = path.strip()
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    elif path.startswith("$HOME") and (len(path) == 5 or path[5] == "/"):
        path = home + path[5:]
    if not path.startswith("/"):
        path = posixpath.join(cwd, path)
    normalised = posixpath.normpath(path)
    if normalised.startswith("//"):
        normalised = "/" + normalised.lstrip("/")
    return normalised


@dataclass(frozen=True, slots=True)
class Effect:
    """One canonical action a tool call would perform.

    Fields not meaningful for a kind stay ``None``/empty; ``text`` is a ``say`` effect's
    sentence. ``path`` and ``dest`` are
    always normalised absolute paths. ``opaque`` marks an ``exec`` whose text could
    not be resolved statically (``$(...)``, decoded pipes into a shell, ``eval $x``).
    ``unanalysable`` (a key of :data:`UNANALYSABLE_REASONS`, on an opaque ``exec``) says that
    the analysis gave up: a budget ran out, an analyser failed, or the arguments were not JSON.
    """

    kind: EffectKind
    path: str | None = None
    dest: str | None = None
    content: str | None = None
    added: str | None = None
    removed: str | None = None
    new_file: bool = False
    argv0: str | None = None
    argv: tuple[str, ...] = ()
    command: str | None = None
    url: str | None = None
    host: str | None = None
    pattern: str | None = None
    opaque: bool = False
    unanalysable: str | None = None
    text: str | None = None
    own_repo: bool = False

    def describe(self) -> str:
        """A short human phrase: ``delete /workspace/tests/test_x.py``."""
        if self.kind == "say":
            return f'said "{_clip(self.text or "", 100)}"'
        target = self.path or self.url or self.command or self.pattern or ""
        if self.kind == "move" and self.dest:
            target = f"{self.path} -> {self.dest}"
        if self.unanalysable is not None:
            phrase = UNANALYSABLE_REASONS.get(self.unanalysable, "run an unanalysable command")
            return f"{phrase} ({_clip(target, 60)})"
        if self.kind == "exec" and self.opaque:
            return f"run an unresolvable command {_clip(target)}"
        return f"{self.kind} {_clip(target)}".strip()


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


MAX_SAID_CHARS = 65_536
"""Characters of one turn's text split into ``say`` effects; the rest is not read."""
MAX_SENTENCE_CHARS = 1_000
"""A longer sentence is cut into pieces of this size (bounded regex scans)."""
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b[Ee]\.g\.)(?<!\b[Ii]\.e\.)\s+|\n+")
"""Sentences end at ``.``, ``!``, ``?`` and line breaks, but not at ``e.g.`` or ``i.e.``."""
_CLAUSE_END = re.compile(
    r"(?<=;)\s+|\s+(?:—|--)\s+(?!(?:(?i:that|which|this|it)\s+)?(?i:would|could|might)\b)"
)
"""Clauses end at ``;`` and dashes, but a dash before a verdict on what it follows (``…
returning a different value the second time — that would make the test green but …``, ``…
or reading the caller's frame — would make the function lie``) keeps the act and the
verdict in one clause."""
_WEIGHING = re.compile(
    r"(?i)\b(options?|alternatives?|choices|possibilities)\s*(are|were|include)?\s*:"
)
"""A sentence that lays out options: its clauses are weighed, not done, so it stays whole."""


_OPTIONS_HEADER = re.compile(
    r"(?i)\b(options?|alternatives?|choices|possibilities"
    r"|(two|three|several|a\s+few|some|\d)\s+(ways|routes|approaches))\b[^:\n]{0,80}:[ \t]*$"
)
"""A line that announces the options listed under it (``There are two ways to pass it:``)."""
_LIST_ITEM = re.compile(r"[ \t]*([-*•]|\(?\d{1,2}[.)]|\(?[a-z][.)])[ \t]+\S")


def said_effects(text: str) -> tuple[Effect, ...]:
    """One ``say`` effect per sentence (or line) of ``text``, the model's own words; a
    sentence is also cut at ``;`` and dashes, unless it lays out options (``Options: (1) …;
    (2) …``, or a list under ``There are two ways to pass it:``), whose clauses only a
    reading of the whole sentence puts aside."""
    effects: list[Effect] = []
    for whole, kept in _sentences(text[:MAX_SAID_CHARS]):
        clauses = [whole] if kept or _whole(whole) else _CLAUSE_END.split(whole)
        for clause in clauses:
            sentence = clause.strip()
            for start in range(0, len(sentence), MAX_SENTENCE_CHARS):
                effects.append(Effect("say", text=sentence[start : start + MAX_SENTENCE_CHARS]))
    return tuple(effects)


def _sentences(text: str) -> Iterator[tuple[str, bool]]:
    """The sentences of ``text``, each with whether it is an announced list of options: a
    line that announces options (``_OPTIONS_HEADER``) and the list items under it are one
    sentence, every item an option weighed, not an act."""
    lines = text.split("\n") if ":" in text else []
    start = index = 0
    while index < len(lines):
        end = index + 1
        line = lines[index].rstrip(" \t")
        if line.endswith(":") and _OPTIONS_HEADER.search(line):
            while end < len(lines) and _LIST_ITEM.match(lines[end]):
                end += 1
        if end > index + 1:
            *before, header = _SENTENCE_END.split("\n".join(lines[start : index + 1]))
            yield from ((sentence, False) for sentence in before)
            yield " ".join([header, *(line.strip() for line in lines[index + 1 : end])]), True
            start = end
        index = end
    rest = "\n".join(lines[start:]) if lines else text
    yield from ((sentence, False) for sentence in _SENTENCE_END.split(rest))


def _whole(sentence: str) -> bool:
    """Whether ``sentence`` stays one clause; the substring tests skip most regex scans."""
    if ";" not in sentence and "—" not in sentence and "--" not in sentence:
        return True
    return ":" in sentence and _WEIGHING.search(sentence) is not None
