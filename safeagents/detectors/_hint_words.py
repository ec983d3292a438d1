"""Which detectors' hint words a text holds, found in one pass for all of them.

A detector's ``hints`` are plain words without which it cannot match (``exit``, ``stack``);
looking for each with ``in`` scans a long file once per word. One RE2 set of every word
registered scans it once, and the answer for the last text is kept for the detectors that
ask next.
"""

from __future__ import annotations

import threading

import re2

__all__ = ["hints_in", "register_hints"]

_words: dict[str, int] = {}
_compiled: tuple[re2.Set, tuple[str, ...]] | None = None
_lock = threading.Lock()
_last: tuple[str, frozenset[str]] | None = None


def register_hints(words: tuple[str, ...]) -> None:
    """Add ``words`` to those :func:`hints_in` finds."""
    global _compiled, _last
    with _lock:
        new = [word for word in words if word not in _words]
        for word in new:
            _words[word] = len(_words)
        if new:
            _compiled, _last = None, None


def hints_in(text: str) -> frozenset[str]:
    """The registered words that occur in ``text``."""
    global _last
    last = _last
    if last is not None and last[0] is text:
        return last[1]
    pattern_set, words = _pattern_set()
    matched = pattern_set.Match(text)
    found = frozenset(words[index] for index in matched) if matched else frozenset()
    _last = (text, found)
    return found


def _pattern_set() -> tuple[re2.Set, tuple[str, ...]]:
    global _compiled
    compiled = _compiled
    if compiled is None:
        with _lock:
            options = re2.Options()
            options.max_mem = 64 << 20
            pattern_set = re2.Set.SearchSet(options)
            words = tuple(_words)
            for word in words:
                pattern_set.Add(re2.escape(word))
            pattern_set.Compile()
            compiled = _compiled = (pattern_set, words)
    return compiled
