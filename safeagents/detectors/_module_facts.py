"""One walk over a parsed module, shared by every detector: its nodes by type, with their scopes.

Detectors ask these facts instead of walking the tree again, and use the scope of a node (the
innermost function or lambda around it) to skip functions that cannot match.
"""

from __future__ import annotations

import ast
from itertools import chain
from typing import Any, TypeVar

from safeagents.detectors._ast_facts import FunctionNode, aliases_of_imports
from safeagents.detectors._identity_cache import IdentityCache

__all__ = ["ModuleFacts", "Scope", "module_facts"]

Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None
"""The innermost function or lambda around a node; ``None`` at module level."""

_NodeT = TypeVar("_NodeT", bound=ast.AST)
_SCOPE_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})
"""Fields that only hold load/store contexts and operators: leaves no detector looks for."""
_CACHE_SIZE = 4
"""As small as the parse cache: the facts keep their tree alive."""

_child_fields: dict[type[ast.AST], tuple[str, ...]] = {}


class ModuleFacts:
    """Every node of a tree in ``ast.walk`` order (operators and contexts left out), by type."""

    __slots__ = (
        "_aliases",
        "_by_type",
        "_first_functions",
        "_functions_by_name",
        "_merged",
        "_of",
        "nodes",
        "scopes",
        "tree",
    )

    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
        self.nodes, self.scopes, self._by_type = _walk(tree)
        self._of: dict[tuple[type[ast.AST], ...], list[Any]] = {}
        self._merged: dict[tuple[type[ast.AST], ...], list[int]] = {}
        self._aliases: dict[str, str] | None = None
        self._functions_by_name: dict[str, FunctionNode] | None = None
        self._first_functions: dict[str, FunctionNode] | None = None

    def of(self, *types: type[_NodeT]) -> list[_NodeT]:
        """Nodes whose type is one of ``types``, in ``ast.walk`` order (kept: do not mutate)."""
        found = self._of.get(types)
        if found is None:
            nodes = self.nodes
            found = self._of[types] = [nodes[index] for index in self._indices(types)]
        return found

    def scoped(self, *types: type[_NodeT]) -> list[tuple[_NodeT, Scope]]:
        """Like :meth:`of`, each node with its innermost enclosing function or lambda."""
        nodes, scopes = self.nodes, self.scopes
        pairs: list[Any] = [(nodes[i], scopes[i]) for i in self._indices(types)]
        return pairs

    def _indices(self, types: tuple[type[ast.AST], ...]) -> list[int]:
        if len(types) == 1:
            return self._by_type.get(types[0], [])
        merged = self._merged.get(types)
        if merged is None:
            lists = [self._by_type.get(kind, []) for kind in types]
            merged = self._merged[types] = sorted(chain.from_iterable(lists))
        return merged

    @property
    def functions(self) -> list[FunctionNode]:
        """Every ``def`` and ``async def``, nested ones included, in ``ast.walk`` order."""
        return self.of(ast.FunctionDef, ast.AsyncFunctionDef)

    @property
    def functions_by_name(self) -> dict[str, FunctionNode]:
        """Name -> function; of several with one name, the last in ``ast.walk`` order."""
        if self._functions_by_name is None:
            self._functions_by_name = {function.name: function for function in self.functions}
        return self._functions_by_name

    def first_function(self, name: str) -> FunctionNode | None:
        """Of the functions called ``name``, the first in ``ast.walk`` order."""
        if self._first_functions is None:
            first: dict[str, FunctionNode] = {}
            for function in self.functions:
                first.setdefault(function.name, function)
            self._first_functions = first
        return self._first_functions.get(name)

    @property
    def aliases(self) -> dict[str, str]:
        """What :func:`~safeagents.detectors._ast_facts.import_aliases` gives for the tree."""
        if self._aliases is None:
            self._aliases = aliases_of_imports(self.of(ast.Import, ast.ImportFrom))
        return self._aliases


def _walk(
    tree: ast.AST,
) -> tuple[list[ast.AST], list[Scope], dict[type[ast.AST], list[int]]]:
    """Breadth first like ``ast.walk``: the nodes, each one's scope, node indices by type."""
    nodes: list[ast.AST] = [tree]
    scopes: list[Scope] = [None]
    by_type: dict[type[ast.AST], list[int]] = {}
    add_node, add_scope = nodes.append, scopes.append
    for index, node in enumerate(nodes):  # grows while iterated: the breadth-first queue
        node_type = type(node)
        same_type = by_type.get(node_type)
        if same_type is None:
            by_type[node_type] = [index]
        else:
            same_type.append(index)
        scope: Any = node if node_type in _SCOPE_TYPES else scopes[index]
        fields = _child_fields.get(node_type)
        if fields is None:
            fields = _child_fields[node_type] = tuple(
                name for name in node_type._fields if name not in _LEAF_FIELDS
            )
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        add_node(item)
                        add_scope(scope)
            elif isinstance(value, ast.AST):
                add_node(value)
                add_scope(scope)
    return nodes, scopes, by_type


def module_facts(tree: ast.AST) -> ModuleFacts:
    """The facts of ``tree``, computed once per tree object and cached."""
    return _cache(tree)


_cache: IdentityCache[ast.AST, ModuleFacts] = IdentityCache(ModuleFacts, _CACHE_SIZE)
