"""Pattern compilation: globs to regexes, and one RE2 ``Set`` (or ``Filter``) per effect field."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

import re2

__all__ = ["GlobError", "PatternBank", "contains_to_regex", "glob_to_regex", "regex_problem"]

logger = logging.getLogger("safeagents.rules")

_SENTINEL = ""  # matches every text, so a scan that lacks it is known to have failed
_BASE_MEMORY = 64 << 20
_MEMORY_PER_PATTERN = 64 << 10
_COUNTED = re.compile(r"\{\d*,(\d+)\}")
WIDE_GAP = 10
"""A counted repetition of up to this many or more (``.{0,60}``) multiplies a DFA's states."""
FILTERED_FROM = 16
"""A field with this many patterns holding wide gaps (the phrases of ``text``) is matched
through FilteredRE2: one pass finds the patterns' literal atoms, then only the patterns whose
atoms occur run. One RE2 Set of them would want far more DFA states than its memory budget
and, on varied text, rebuild them on every scan (on the real corpus's sentences: 74 µs a
scan against 11)."""
REMEMBERED_SCANS = 1024
"""Scans of such a field remembered (a quarter of an agent's sentences repeat one it said
earlier in the session: "Let me run the tests again.")."""


class GlobError(ValueError):
    """A glob that cannot be translated (an unclosed ``[``)."""


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    return options


def regex_problem(pattern: str) -> str | None:
    """Why RE2 rejects ``pattern`` (``missing )``), or ``None`` when it compiles."""
    try:
        re2.compile(pattern, _options())
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid pattern"
        text = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        return text.split(": ", 1)[0]
    return None


def contains_to_regex(text: str) -> str:
    return str(re2.escape(text))


def glob_to_regex(glob: str) -> str:
    """Translate a path glob; see the rule DSL doc for the exact semantics."""
    anchored = glob.startswith("/")
    body = glob[1:] if anchored else glob
    if body.endswith("/"):
        body += "**"
    segments: list[str] = []
    for segment in body.split("/"):
        if not (segment == "**" and segments and segments[-1] == "**"):
            segments.append(segment)
    regex = ""
    for index, segment in enumerate(segments):
        if segment == "**":
            if len(segments) == 1:
                regex += ".*"
            elif index == len(segments) - 1:
                regex += "(?:/.*)?"
            else:
                regex += "(?:.*/)?" if index == 0 else "/(?:.*/)?"
            continue
        if index > 0 and segments[index - 1] != "**":
            regex += "/"
        regex += _segment_to_regex(segment, glob)
    return ("^/" if anchored else "(?:^|/)") + regex + "$"


def _segment_to_regex(segment: str, glob: str) -> str:
    out: list[str] = []
    position = 0
    while position < len(segment):
        char = segment[position]
        position += 1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and position < len(segment):
            out.append(contains_to_regex(segment[position]))
            position += 1
        elif char == "[":
            start = position + 1 if segment[position : position + 1] in ("!", "^") else position
            start += 1 if segment[start : start + 1] == "]" else 0
            end = segment.find("]", start)
            if end < 0:
                raise GlobError(f"invalid glob '{glob}': unclosed '['")
            content = segment[position:end]
            negate = content[:1] in ("!", "^")
            content = content[1:] if negate else content
            content = content.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
            out.append(f"[^{content}/]" if negate else f"[{content}]")
            position = end + 1
        else:
            out.append(contains_to_regex(char))
    return "".join(out)


class PatternBank:
    """Every regex of every rule, grouped by effect field, each field scanned by one RE2 Set
    (FilteredRE2 for a field of many wide-gapped phrases, see :data:`FILTERED_FROM`)."""

    def __init__(self) -> None:
        self._patterns: dict[str, dict[str, int]] = {}
        self._sets: dict[str, re2.Set | re2.Filter | None] = {}
        self._fallback: dict[str, list[tuple[int, re2._Regexp]]] = {}
        self._filtered: dict[tuple[str, str], frozenset[int]] = {}

    def add(self, field: str, regex: str) -> int:
        """The index of ``regex`` in ``field``'s set (stable; identical regexes share one)."""
        patterns = self._patterns.setdefault(field, {})
        if regex not in patterns:
            patterns[regex] = len(patterns) + 1  # 0 is the sentinel
            self._sets.pop(field, None)
            self._filtered.clear()
        return patterns[regex]

    def fields(self) -> Iterable[str]:
        return self._patterns.keys()

    def size(self, field: str) -> int:
        return len(self._patterns.get(field, ()))

    def compile(self) -> None:
        """Build the sets now rather than on the first scan."""
        for field in self._patterns:
            self._matcher(field)

    def scan(self, field: str, text: str) -> frozenset[int]:
        """Indices of ``field``'s patterns that ``text`` matches (one pass over ``text``)."""
        if field not in self._patterns:
            return frozenset()
        matcher = self._matcher(field)
        if isinstance(matcher, re2.Filter):
            key = (field, text)
            found = self._filtered.get(key)
            if found is None:
                found = frozenset(index + 1 for index in matcher.Match(text) or ())
                if len(self._filtered) >= REMEMBERED_SCANS:
                    self._filtered.clear()
                self._filtered[key] = found
            return found
        if matcher is not None:
            found = frozenset(matcher.Match(text) or ())  # indices come unsorted
            if 0 in found:
                return found - {0}
            logger.warning("RE2 set scan of field %r failed; matching patterns one by one", field)
        return frozenset(i for i, regex in self._compiled(field) if regex.search(text))

    def _matcher(self, field: str) -> re2.Set | re2.Filter | None:
        if field in self._sets:
            return self._sets[field]
        patterns = self._patterns[field]
        matcher: re2.Set | re2.Filter | None
        try:
            if sum(map(_wide, patterns)) >= FILTERED_FROM:
                matcher = re2.Filter()
                for regex in patterns:  # insertion order: index i is pattern i + 1
                    matcher.Add(regex, _options())
            else:
                options = _options()
                options.max_mem = _BASE_MEMORY + _MEMORY_PER_PATTERN * len(patterns)
                matcher = re2.Set.SearchSet(options)
                for regex in (_SENTINEL, *patterns):  # insertion order, so indices line up
                    matcher.Add(regex)
            matcher.Compile()
        except re2.error:
            logger.warning("RE2 set for field %r does not compile; using single regexes", field)
            matcher = None
        self._sets[field] = matcher
        return matcher

    def _compiled(self, field: str) -> list[tuple[int, re2._Regexp]]:
        if field not in self._fallback:
            self._fallback[field] = [
                (index, re2.compile(regex, _options()))
                for regex, index in self._patterns[field].items()
            ]
        return self._fallback[field]


def _wide(regex: str) -> bool:
    return any(int(bound) >= WIDE_GAP for bound in _COUNTED.findall(regex))
