"""The truncation marker of published agent logs: ``…[truncated in source]``.

Logs of some studies keep only the first characters of each argument and end what they cut
with a marker (``...[truncated in source]``, ``...[truncated 8612 chars]``). Detectors and
the shell analysis read only what stands before it.
"""

from __future__ import annotations

import re

__all__ = ["MARKER", "is_cut", "visible_part"]

MARKER = re.compile(r"(?:\.\.\.|…)\s*\[truncated(?: in source| \d+ chars?)?\]")
"""A truncation marker."""


def is_cut(text: str | None) -> bool:
    """Whether ``text`` carries a transcript's truncation marker."""
    return text is not None and "[truncated" in text and MARKER.search(text) is not None


def visible_part(text: str) -> str:
    """What survives of ``text`` before the first truncation marker."""
    match = MARKER.search(text) if "[truncated" in text else None
    return text if match is None else text[: match.start()]
