"""What a text of a session reveals: the path-like names it holds, its URLs, the literals of
its assertion-like lines, and powers spelt out as the numbers they make. The session model
(:mod:`safeagents._session`) reads every message and output through these."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "MAX_SCANNED_CHARS",
    "assert_literals",
    "expand_powers",
    "line_key",
    "path_names",
    "shows_missing",
    "stated_cwd",
    "urls",
]

MAX_SCANNED_CHARS = 128_000
"""Characters of one output or message read for names and literals; the rest is ignored."""
_NAME = re.compile(r"[\w./-]+")
_MISSING = re.compile(
    r"(?i)no such file|can't open file|cannot open|not found|does not exist|cannot access"
)
_ASSERT_LINE = re.compile(
    r"(?i)\bassert\w*\b|\bexpect\s*\(|\.to(?:Be|Equal|StrictEqual)\b|\bisEqualTo\b"
    r"|^\s*(?:>>>|input\s*:|output\s*:|expected\s*(?:output)?\s*:)"
)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_POWER = re.compile(
    r"(?<![\w.*])(?:(\d{1,6})\s*\*\s*)?(\d+)\s*\*\*\s*(\d{1,2})(?:\s*([+-])\s*(\d{1,18}))?(?![\w.*])"
)
_URL = re.compile(r"https?://[^\s'\"<>()\[\]`]{4,500}")
_STATED_CWD = re.compile(
    r"(?m)^[ \t]*(?:current[ \t]+)?working[ \t]+directory:[ \t]*(/[^\s<>]*)[ \t]*$"
    r"|<cwd>[ \t]*(/[^\s<>]*)[ \t]*</cwd>",
    re.IGNORECASE,
)
_STATED_SCAN = 20_000
"""Characters of each text searched for a stated working directory."""
_STRING = re.compile(r"\"([^\"\\\n]{1,200})\"|'([^'\\\n]{1,200})'")


def path_names(text: str) -> set[str]:
    """The path-like words of ``text`` and their last components (``src/a.py``, ``a.py``),
    leaving out lines that say a file is missing."""
    text = text[:MAX_SCANNED_CHARS]
    if _MISSING.search(text):
        text = "\n".join(line for line in text.splitlines() if not _MISSING.search(line))
    names: set[str] = set()
    for word in set(_NAME.findall(text)):
        word = word.strip("./-") if word.startswith("./") else word.rstrip("./-")
        if len(word) < 2:
            continue
        names.add(word)
        if "/" in word:
            names.add(word.rsplit("/", 1)[1])
    return names


def shows_missing(text: str) -> bool:
    """Whether ``text`` (an output) says a file is missing."""
    return bool(_MISSING.search(text[:MAX_SCANNED_CHARS]))


def stated_cwd(texts: Iterable[str]) -> str | None:
    """The working directory a harness states in the texts it sends before the agent's first
    turn (its system prompt and first user messages: Claude Code's and opencode's ``Working
    directory: /w``, pi's ``Current working directory: /w``, codex's ``<cwd>/w</cwd>``), when
    they state exactly one."""
    found: set[str] = set()
    for text in texts:
        for match in _STATED_CWD.finditer(text[:_STATED_SCAN]):
            found.add((match.group(1) or match.group(2)).rstrip("/") or "/")
    return found.pop() if len(found) == 1 else None


def urls(text: str) -> set[str]:
    return {url.rstrip(".,;:") for url in _URL.findall(text[:MAX_SCANNED_CHARS])}


def line_key(line: str) -> str:
    """``line`` as the model remembers lines the agent wrote: whitespace collapsed."""
    return " ".join(line.split())


def assert_literals(text: str) -> set[str]:
    """Literals of the assertion-like lines of ``text`` (``assert f(7) == 31``,
    ``expect(x).toBe("a b")``, ``assertEqual``, doctest ``>>>`` and ``Input:``/``Output:``
    lines): numbers as written, strings without their quotes."""
    found: set[str] = set()
    text = text[:MAX_SCANNED_CHARS]
    if not _ASSERT_LINE.search(text):
        return found
    for line in text.splitlines():
        if not _ASSERT_LINE.search(line):
            continue
        found.update(_NUMBER.findall(line))
        if "**" in line:
            found.update(_NUMBER.findall(expand_powers(line)))
        for double, single in _STRING.findall(line):
            found.add(double or single)
    return found


def expand_powers(text: str) -> str:
    """``text`` with powers spelt out as the numbers they make (``10**6`` → ``1000000``,
    ``10**12 + 5000`` → ``1000000005000``, ``2 * 10**5`` → ``200000``), the way code folds
    them, so that a literal of the code can be looked for in the tests as written."""
    if "**" not in text:
        return text
    return _POWER.sub(_power_value, text)


def _power_value(match: re.Match[str]) -> str:
    factor, base, exponent, sign, offset = match.groups()
    if len(base) > 6:
        return match.group(0)
    value = int(factor or 1) * int(base) ** int(exponent)
    if offset:
        value += int(offset) if sign == "+" else -int(offset)
    return str(value)
