"""A call in analysed Python code, as a tool function given to ``analyze_python`` sees it."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from types import MappingProxyType

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis._python._resolve import Resolver

__all__ = ["NO_TOOLS", "PythonCall", "PythonTool", "argument", "opaque_python"]


def opaque_python(command: str) -> Effect:
    return Effect("exec", argv0="python", command=command, opaque=True)


def argument(node: ast.Call, index: int | None, *keywords: str) -> ast.expr | None:
    """The argument passed as one of ``keywords`` or at position ``index`` (``None``: none)."""
    for keyword in node.keywords:
        if keyword.arg in keywords:
            return keyword.value
    if index is None or index >= len(node.args):
        return None
    if any(isinstance(argument, ast.Starred) for argument in node.args[: index + 1]):
        return None
    return node.args[index]


class PythonCall:
    """A call to one of the ``tools`` given to ``analyze_python``, with its arguments resolved.

    Arguments are found by position or keyword, like Python binds them; their values are the
    strings the analyser can tell statically (through variables, f-strings, loops).
    """

    __slots__ = ("_node", "_resolver", "_segment", "ctx")

    def __init__(
        self,
        node: ast.Call,
        resolver: Resolver,
        ctx: AnalysisContext,
        segment: Callable[[ast.AST], str],
    ) -> None:
        self.ctx = ctx
        """Where the call runs (after the ``os.chdir`` calls before it)."""
        self._node = node
        self._resolver = resolver
        self._segment = segment

    def text(self, index: int | None, *keywords: str) -> str | None:
        """The argument when it is one statically known string, else ``None``."""
        return self._resolver.single_text(argument(self._node, index, *keywords))

    def texts(self, index: int | None, *keywords: str) -> list[str] | None:
        """Every string the argument may be, or ``None`` when unknown or absent."""
        found = self._resolver.values(argument(self._node, index, *keywords))
        return None if found is None else [value.text for value in found]

    def opaque(self) -> Effect:
        """An opaque ``exec`` of the call's source text: what it does cannot be told."""
        return opaque_python(self._segment(self._node))


PythonTool = Callable[[PythonCall], list[Effect]]
"""Effects of a call to an extra callable (a harness' tool API) in analysed Python code."""

NO_TOOLS: Mapping[str, PythonTool] = MappingProxyType({})
