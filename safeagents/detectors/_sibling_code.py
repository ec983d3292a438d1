"""Python written beside an edit: the same call's other edits, earlier writes of the file.

A lookup one edit adds (``if key in _EXPECTED: return _EXPECTED[key]``) may read a table
that another edit of the same call added (Claude Code's ``MultiEdit``, pi's ``edits``), or
an earlier edit of the same file. :func:`sibling_facts` gives the facts of those texts, for
the names the edit reads as containers without binding them (:func:`unbound_containers`).
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable, Iterator

from safeagents._detector import CallContext
from safeagents.detectors._ast_facts import FunctionNode
from safeagents.detectors._module_facts import ModuleFacts
from safeagents.detectors._python import MAX_SOURCE_CHARS, argument_strings

__all__ = ["function_finder", "read_containers", "sibling_facts", "unbound_containers"]

_MAX_EARLIER = 32
"""Earlier effects of the session looked at, newest first."""


def unbound_containers(facts: ModuleFacts) -> set[str]:
    """Names read as a container (:func:`read_containers`) that the code neither assigns nor
    takes as a parameter."""
    read = read_containers(facts)
    if not read:
        return read
    bound = {node.id for node in facts.of(ast.Name) if isinstance(node.ctx, ast.Store | ast.Del)}
    bound.update(argument.arg for argument in facts.of(ast.arg))
    return read - bound


def read_containers(facts: ModuleFacts) -> set[str]:
    """Names read as a container: ``T[x]``, ``T.get(x)``, ``x in T``, ``for … in T``."""
    read: set[str] = set()
    for node in facts.of(ast.Subscript):
        if isinstance(node.value, ast.Name):
            read.add(node.value.id)
    for call in facts.of(ast.Call):
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "get"
            and isinstance(func.value, ast.Name)
        ):
            read.add(func.value.id)
    for compare in facts.of(ast.Compare):
        for op, right in zip(compare.ops, compare.comparators, strict=True):
            if isinstance(op, ast.In) and isinstance(right, ast.Name):
                read.add(right.id)
    loops: list[ast.For | ast.comprehension] = [*facts.of(ast.For), *facts.of(ast.comprehension)]
    for loop in loops:
        if isinstance(loop.iter, ast.Name):
            read.add(loop.iter.id)
    return read


def function_finder(
    facts: ModuleFacts, source: str, path: str | None, context: CallContext
) -> Callable[[str], FunctionNode | None]:
    """Finds a function by name in ``facts``, else in :func:`sibling_facts` (read only when
    asked): a helper that an earlier edit of the file defined."""

    def find(name: str) -> FunctionNode | None:
        found = facts.first_function(name)
        if found is None:
            for other in sibling_facts(source, path, context):
                if (found := other.first_function(name)) is not None:
                    break
        return found

    return find


def sibling_facts(source: str, path: str | None, context: CallContext) -> Iterator[ModuleFacts]:
    """Facts of the other Python texts of this call's arguments, then of earlier writes of
    ``path`` in the session (newest first); texts that do not parse are skipped."""
    seen = {source}
    for text in _sibling_texts(source, path, context):
        if text not in seen:
            seen.add(text)
            facts = _facts(text)
            if facts is not None:
                yield facts


def _sibling_texts(source: str, path: str | None, context: CallContext) -> Iterator[str]:
    for text in argument_strings(context.call.arguments):
        if source not in text:
            yield text
    if path is None:
        return
    for effect in list(reversed(context.session.effects))[:_MAX_EARLIER]:
        if effect.kind == "write" and effect.path == path:
            written = effect.content if effect.content is not None else effect.added
            if written is not None:
                yield written


def _facts(text: str) -> ModuleFacts | None:
    """Facts of ``text`` parsed as it is or dedented, or without the block headers an edit's
    text ends at (``for i in range(n):``, its body left as it was); not cached: these are
    one-offs. Text without an ``=`` or a ``[`` neither binds nor reads a table."""
    if len(text) > MAX_SOURCE_CHARS or ("=" not in text and "[" not in text):
        return None
    dedented = textwrap.dedent(text)
    for candidate in (text, dedented, _headers_dropped(dedented)):
        try:
            return ModuleFacts(ast.parse(candidate))
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            continue
    return None


def _headers_dropped(text: str) -> str:
    lines = text.rstrip().split("\n")
    while lines and lines[-1].rstrip().endswith(":"):
        lines.pop()
    return "\n".join(lines)
