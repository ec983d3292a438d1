"""A tool result as the detectors read it: the text the command printed, not its envelope."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["LINE_NUMBER", "output_text"]

LINE_NUMBER = r"\d+(?:\t|→|\|[ \t])"
"""The number a read tool puts before each line of a file, as a pattern: ``cat -n``'s
``   12\t``, Claude Code's ``   12→``, opencode's ``00012| ``."""

_ENVELOPE_START = '{"output"'
_ENVELOPE_KEYS = frozenset({"output", "metadata", "exit_code", "error"})


def output_text(text: str) -> str:
    """``text``, or the printed text of a shell-result envelope: codex's
    (``{"output": "…", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}``) and
    hermes's (``{"output": "…", "exit_code": 1, "error": "…"}``, its error on a line after).

    Read as it comes, an envelope is one line of JSON with the printed lines escaped in it,
    so every question asked line by line (an assertion calling a function, a pytest summary,
    a ``git status`` line) would see the whole output as one line. Anything else, an object
    with other keys included, is left as it is."""
    if not text.startswith(_ENVELOPE_START):
        return text
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
