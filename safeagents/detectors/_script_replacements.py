"""The text a Python script puts into a file with ``str.replace``, its names resolved.

``new = "…"`` … ``p.write_text(s.replace(old, new))`` writes ``new``, which the analysis of
the call does not record when the replacement is the write's own argument; the detectors of
solution code read it here.
"""

from __future__ import annotations

import ast
import posixpath

from safeagents._detector import CallContext
from safeagents.analysis import Resolver

__all__ = ["replaced_texts"]

_MAX_SCRIPT = 20_000
_MAX_NODES = 20_000
_PYTHONS = frozenset({"python", "python3"})


def replaced_texts(path: str, context: CallContext) -> list[str]:
    """The new texts of the ``replace`` calls of the Python scripts this call runs that name
    ``path``'s file."""
    name = posixpath.basename(path)
    texts: list[str] = []
    for effect in context.effects:
        code = effect.command
        if effect.kind != "exec" or effect.argv0 not in _PYTHONS or not code or name not in code:
            continue
        if len(code) > _MAX_SCRIPT:
            continue
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError):
            continue
        resolver = Resolver(tree, _MAX_NODES)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "replace"
                and len(node.args) >= 2
            ):
                text = resolver.single_text(node.args[1])
                if text and text.strip():
                    texts.append(text)
    return texts
