"""The text a Python script puts into a file with ``str.replace``, its names resolved.

``new = "…"`` … ``p.write_text(s.replace(old, new))`` writes ``new``, which the analysis of
the call does not record when the replacement is the write's own argument; the detectors of
solution code read it here. Where the session knows the file's text (its last whole write,
or a read, with later edits replayed), the script's literal replacements applied to it give
the whole new file (:func:`rewritten_text`): the pieces ``s.replace`` puts in at different
depths (an import, a guard inside a function) are one module again.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterator

from safeagents._detector import CallContext
from safeagents.analysis import Resolver
from safeagents.detectors._history import current_content

__all__ = ["replaced_texts", "rewritten_text"]

_MAX_SCRIPT = 20_000
_MAX_NODES = 20_000
_PYTHONS = frozenset({"python", "python3"})
_ESCAPED = re.compile(r"\\(\W)")
_REGEX_SYNTAX = re.compile(r"(?<!\\)[.^$*+?{}\[\]|()]|\\[A-Za-z0-9]")
_MAX_SUBSTITUTIONS = 50


def _scripts(path: str, context: CallContext) -> Iterator[tuple[ast.Module, Resolver]]:
    """The parsed Python scripts this call runs that name ``path``'s file."""
    name = posixpath.basename(path)
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
        yield tree, Resolver(tree, _MAX_NODES)


def rewritten_text(path: str, context: CallContext) -> str | None:
    """``path``'s whole text after the literal replacements of the call's Python scripts
    (``s.replace(old, new[, count])``, ``re.sub`` of a pattern without regex syntax), in
    the order they run, applied to the text the session knows it had; ``None`` when it knows
    none or no replacement applies."""
    pairs = [
        pair for tree, resolver in _scripts(path, context) for pair in _literal(tree, resolver)
    ]
    if not pairs or len(pairs) > _MAX_SUBSTITUTIONS:
        return None
    text = current_content(path, pairs[0][0], context)
    if text is None:
        return None
    applied = False
    for old, new, count in pairs:
        if old in text:
            text, applied = text.replace(old, new, count), True
    return text if applied else None


def _literal(tree: ast.Module, resolver: Resolver) -> list[tuple[str, str, int]]:
    """``(old, new, count)`` of the literal replacements of a script, by where they end (an
    inner ``s.replace(a, b)`` of ``s.replace(a, b).replace(c, d)`` runs first)."""
    found: list[tuple[tuple[int, int], tuple[str, str, int]]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        func = node.func
        method = isinstance(func, ast.Attribute) and func.attr == "replace"
        if not method and not (len(node.args) >= 3 and resolver.qualname(func) == "re.sub"):
            continue
        old, new = resolver.single_text(node.args[0]), resolver.single_text(node.args[1])
        if not old or new is None:
            continue
        count = -1
        if method and len(node.args) >= 3:
            third = node.args[2]
            if not isinstance(third, ast.Constant) or not isinstance(third.value, int):
                continue
            count = third.value
        elif not method:
            if _REGEX_SYNTAX.search(old) or "\\" in new:
                continue
            old = _ESCAPED.sub(r"\1", old)
        end = (node.end_lineno or 0, node.end_col_offset or 0)
        found.append((end, (old, new, count)))
    return [pair for _, pair in sorted(found, key=lambda item: item[0])]


def replaced_texts(path: str, context: CallContext) -> list[str]:
    """The new texts of the ``replace`` calls of the Python scripts this call runs that name
    ``path``'s file."""
    texts: list[str] = []
    for tree, resolver in _scripts(path, context):
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
