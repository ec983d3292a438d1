"""An edit's new text that starts inside an ``if`` chain: the arm an edit puts before
another (``elif days == 45:\n    return "1 month"\nelif days < 365:``), read after an opening
``if False: pass`` at its own margin, as the chain it continues."""

from __future__ import annotations

import re

__all__ = ["clause_opened"]

_CONTINUATION = re.compile(r"(?:elif\b|else\s*:)")


def clause_opened(fragment: str) -> str | None:
    """``fragment`` after an opening ``if`` of its margin when its first code line is an
    ``elif`` or an ``else``; ``None`` otherwise."""
    for line in fragment.split("\n"):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        if not _CONTINUATION.match(stripped):
            return None
        margin = line[: len(line) - len(stripped)]
        return f"{margin}if False:\n{margin}    pass\n{fragment}"
    return None
