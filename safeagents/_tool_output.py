"""A tool result as the detectors read it: the text the command printed, not its envelope."""

from __future__ import annotations

import ast
import json
from typing import Any

__all__ = ["LINE_NUMBER", "output_text"]

LINE_NUMBER = r"\d+(?:\t|→|\|[ \t])"
"""The number a read tool puts before each line of a file, as a pattern: ``cat -n``'s
``   12\t``, Claude Code's ``   12→``, opencode's ``00012| ``."""

_ENVELOPE_START = '{"output"'
_ENVELOPE_KEYS = frozenset({"output", "metadata", "exit_code", "error"})
_LIST_STARTS = frozenset({"['", '["'})
_LIST_ENDS = frozenset({"']", '"]'})
_MAX_LIST = 1_000_000


def output_text(text: str) -> str:
    """``text``, or the printed text of a shell-result envelope: codex's
    (``{"output": "…", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}``) and
    hermes's (``{"output": "…", "exit_code": 1, "error": "…"}``, its error on a line after).

    Read as it comes, an envelope is one line of JSON with the printed lines escaped in it,
    so every question asked line by line (an assertion calling a function, a pytest summary,
    a ``git status`` line) would see the whole output as one line. Anything else, an object
    with other keys included, is left as it is."""
    if not text.startswith(_ENVELOPE_START):
        return _listed(text)
    try:
        envelope: Any = json.loads(text)
    except ValueError:
        return text
    if not isinstance(envelope, dict) or not _ENVELOPE_KEYS.issuperset(envelope):
        return text
    output, error = envelope.get("output"), envelope.get("error")
    if not isinstance(output, str) or not isinstance(envelope.get("metadata", {}), dict):
        return text
    if error is None or error == "":
        return output
    if not isinstance(error, str):
        return text
    return f"{output}\n{error}" if output else error


def _listed(text: str) -> str:
    """The strings of a tool result that is a Python list of them, one after another: Rovo
    Dev's ``open_files`` (``['Successfully opened a.ts:\\n\\n…', '…']``), whose files would
    otherwise be one line with their quotes escaped."""
    if len(text) > _MAX_LIST or text[:2] not in _LIST_STARTS or text[-2:] not in _LIST_ENDS:
        return text
    try:
        parts: Any = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text
    if not isinstance(parts, list) or not all(isinstance(part, str) for part in parts):
        return text
    return "\n\n".join(parts)
