"""Static values of Python expressions: import aliases, string and path literals.

Resolution is deliberately small: literals, names bound exactly once in the snippet,
``os.path.join``/``Path``/``/``/``+``/f-strings of those, and loop variables over a
literal list or a glob. Anything else is unresolvable (``None``), never guessed.
"""

from __future__ import annotations

import ast
import itertools
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Resolver", "Value"]

_MAX_DEPTH = 40
_MAX_CANDIDATES = 32
_MAX_TEXT = 1_000_000
_SIMPLE_FORMAT = re.compile(r"(?:[^{}]|\{\d*\})*")
_CANONICAL_PREFIXES = {
    "posix": "os",
    "nt": "os",
    "posixpath": "os.path",
    "ntpath": "os.path",
    "pathlib.PosixPath": "pathlib.Path",
    "pathlib.PurePath": "pathlib.Path",
    "pathlib.PurePosixPath": "pathlib.Path",
    "pathlib.WindowsPath": "pathlib.Path",
    "builtins": "",
    "_io.open": "io.open",
}
_IDENTITY_CALLS = frozenset(
    {
        "str",
        "os.fspath",
        "os.fsdecode",
        "os.path.abspath",
        "os.path.normpath",
        "os.path.realpath",
        "os.path.expanduser",
    }
)
_IDENTITY_PATH_METHODS = frozenset({"resolve", "absolute", "expanduser", "as_posix"})


@dataclass(frozen=True, slots=True)
class Value:
    """A statically known string; ``is_path`` when it is a ``pathlib.Path``."""

    text: str
    is_path: bool = False


_Binding = tuple[str, ast.AST | None]
"""``("expr", node)`` for ``name = node``, ``("iter", node)`` for ``for name in node``."""


def canonical_name(dotted: str) -> str:
    """``posix.remove`` -> ``os.remove``, ``builtins.open`` -> ``open``."""
    for prefix, replacement in _CANONICAL_PREFIXES.items():
        if dotted == prefix or dotted.startswith(prefix + "."):
            rest = dotted[len(prefix) :].lstrip(".")
            if not replacement:
                return rest or dotted
            return f"{replacement}.{rest}" if rest else replacement
    return dotted


class Resolver:
    """Answers "which module function is this?" and "which string is this?" for one snippet."""

    def __init__(self, tree: ast.AST, node_budget: int) -> None:
        self.aliases: dict[str, str] = {}
        self.bindings: dict[str, list[_Binding]] = {}
        self.local_definitions: set[str] = set()
        self.truncated = False
        self._memo: dict[str, list[Value] | None] = {}
        self._in_progress: set[str] = set()
        self._collect(tree, node_budget)

    def qualname(self, node: ast.AST, depth: int = 0) -> str | None:
        """Dotted name a callee refers to (``os.remove``, ``pathlib.Path.write_text``)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(node, ast.Name):
            return self._name_qualname(node.id, depth)
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value, depth + 1)
            return canonical_name(f"{base}.{node.attr}") if base else None
        if isinstance(node, ast.Subscript):
            if self.qualname(node.value, depth + 1) == "sys.modules":
                key = self.single_text(node.slice, depth + 1)
                return canonical_name(key) if key else None
            return None
        if isinstance(node, ast.Call):
            return self._call_qualname(node, depth)
        return None

    def values(self, node: ast.AST | None, depth: int = 0) -> list[Value] | None:
        """Every string ``node`` may statically be (loops give several), or ``None``."""
        if node is None or depth > _MAX_DEPTH:
            return None
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return [Value(node.value)]
            if isinstance(node.value, bytes):
                return [Value(node.value.decode("utf-8", "replace"))]
            return None
        if isinstance(node, ast.Name):
            return self._name_values(node.id, depth)
        if isinstance(node, ast.JoinedStr):
            return self._joined_str_values(node, depth)
        if isinstance(node, ast.BinOp):
            return self._binop_values(node, depth)
        if isinstance(node, ast.Call):
            return self._call_values(node, depth)
        if isinstance(node, ast.Attribute):
            return self._attribute_values(node, depth)
        return None

    def single_text(self, node: ast.AST | None, depth: int = 0) -> str | None:
        """The one string ``node`` statically is, else ``None``."""
        found = self.values(node, depth)
        return found[0].text if found is not None and len(found) == 1 else None

    def _collect(self, tree: ast.AST, node_budget: int) -> None:
        for count, node in enumerate(ast.walk(tree)):
            if count >= node_budget:
                self.truncated = True
                return
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".", 1)[0]
                        self.aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.local_definitions.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind_target(target, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                self._bind_target(node.target, node.value)
            elif isinstance(node, ast.AugAssign):
                self._bind_unknown(node.target)
            elif isinstance(node, ast.withitem):
                self._bind_unknown(node.optional_vars)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                self._bind_iteration(node.target, node.iter)
            elif isinstance(node, ast.arg):
                self.bindings.setdefault(node.arg, []).append(("unknown", None))
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.bindings.setdefault(node.name, []).append(("unknown", None))

    def _bind_target(self, target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.bindings.setdefault(target.id, []).append(("expr", value))
        elif (
            isinstance(target, (ast.Tuple, ast.List))
            and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts)
        ):
            for element, element_value in zip(target.elts, value.elts, strict=True):
                self._bind_target(element, element_value)
        else:
            self._bind_unknown(target)

    def _bind_iteration(self, target: ast.AST, iterable: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.bindings.setdefault(target.id, []).append(("iter", iterable))
        else:
            self._bind_unknown(target)

    def _bind_unknown(self, target: ast.AST | None) -> None:
        if target is None:
            return
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                self.bindings.setdefault(node.id, []).append(("unknown", None))

    def _single_binding(self, name: str) -> _Binding | None:
        bound = self.bindings.get(name)
        return bound[0] if bound is not None and len(bound) == 1 else None

    def _name_qualname(self, name: str, depth: int) -> str | None:
        if name in self.aliases:
            return canonical_name(self.aliases[name])
        if name in self.local_definitions:
            return None
        binding = self._single_binding(name)
        if binding is not None:
            kind, value = binding
            return self.qualname(value, depth + 1) if kind == "expr" and value else None
        if name in self.bindings:
            return None
        return canonical_name(name)

    def _call_qualname(self, node: ast.Call, depth: int) -> str | None:
        callee = self.qualname(node.func, depth + 1)
        first = node.args[0] if node.args else None
        if callee == "__import__":
            module = self.single_text(first, depth + 1)
            return canonical_name(module.split(".", 1)[0]) if module else None
        if callee == "importlib.import_module":
            module = self.single_text(first, depth + 1)
            return canonical_name(module) if module else None
        if callee == "getattr" and len(node.args) >= 2:
            base = self.qualname(node.args[0], depth + 1)
            attribute = self.single_text(node.args[1], depth + 1)
            return canonical_name(f"{base}.{attribute}") if base and attribute else None
        return None

    def _name_values(self, name: str, depth: int) -> list[Value] | None:
        if name in self._memo:
            return self._memo[name]
        binding = self._single_binding(name)
        if binding is None or name in self._in_progress:
            return None
        self._in_progress.add(name)
        try:
            kind, node = binding
            if kind == "expr":
                found = self.values(node, depth + 1)
            elif kind == "iter" and node is not None:
                found = self._iteration_values(node, depth + 1)
            else:
                found = None
        finally:
            self._in_progress.discard(name)
        self._memo[name] = found
        return found

    def _iteration_values(self, node: ast.AST, depth: int) -> list[Value] | None:
        """What a loop variable over ``node`` may be; globs stay patterns (``tests/*.py``)."""
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return self._union(node.elts, depth)
        if not isinstance(node, ast.Call):
            return None
        callee = self.qualname(node.func, depth + 1)
        arguments = node.args
        if callee in ("glob.glob", "glob.iglob") and arguments:
            return self.values(arguments[0], depth + 1)
        if callee == "os.listdir":
            return [Value("*")]
        if not isinstance(node.func, ast.Attribute):
            return None
        receiver = self._path_values(node.func.value, depth + 1)
        method = node.func.attr
        if receiver is None:
            return None
        if method == "iterdir":
            return [Value(posixpath.join(item.text, "*"), True) for item in receiver]
        if method in ("glob", "rglob") and arguments:
            pattern = self.values(arguments[0], depth + 1)
            prefix = ["**"] if method == "rglob" else []
            return self._combine(
                [receiver, pattern],
                lambda parts: Value(posixpath.join(parts[0], *prefix, parts[1]), True),
            )
        return None

    def _path_values(self, node: ast.AST, depth: int) -> list[Value] | None:
        found = self.values(node, depth)
        if found is None or not all(item.is_path for item in found):
            return None
        return found

    def _joined_str_values(self, node: ast.JoinedStr, depth: int) -> list[Value] | None:
        parts: list[list[Value] | None] = []
        for piece in node.values:
            if isinstance(piece, ast.FormattedValue):
                if piece.format_spec is not None or piece.conversion not in (-1, ord("s")):
                    return None
                parts.append(self.values(piece.value, depth + 1))
            else:
                parts.append(self.values(piece, depth + 1))
        return self._combine(parts, lambda texts: Value("".join(texts)))

    def _binop_values(self, node: ast.BinOp, depth: int) -> list[Value] | None:
        left = self.values(node.left, depth + 1)
        right = self.values(node.right, depth + 1)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Add):
            return self._combine([left, right], lambda texts: Value("".join(texts)))
        if isinstance(node.op, ast.Div) and any(item.is_path for item in left + right):
            return self._combine([left, right], lambda texts: Value(posixpath.join(*texts), True))
        if isinstance(node.op, ast.Mod) and len(left) == 1 and len(right) == 1:
            return _percent_format(left[0].text, right[0].text)
        return None

    def _call_values(self, node: ast.Call, depth: int) -> list[Value] | None:
        callee = self.qualname(node.func, depth + 1)
        arguments = [self.values(argument, depth + 1) for argument in node.args]
        if callee == "os.path.join" and arguments:
            return self._combine(arguments, lambda texts: Value(posixpath.join(*texts)))
        if callee == "pathlib.Path":
            if not arguments:
                return [Value(".", True)]
            return self._combine(arguments, lambda texts: Value(posixpath.join(*texts), True))
        if callee in _IDENTITY_CALLS and len(arguments) == 1 and arguments[0] is not None:
            return [Value(item.text) for item in arguments[0]]
        if callee in ("os.getcwd", "pathlib.Path.cwd"):
            return [Value(".", callee.startswith("pathlib"))]
        if callee == "pathlib.Path.home":
            return [Value("~", True)]
        if callee == "os.path.dirname" and len(arguments) == 1:
            return self._combine(arguments, lambda texts: Value(posixpath.dirname(texts[0])))
        if not isinstance(node.func, ast.Attribute):
            return None
        return self._method_values(node, node.func, arguments, depth)

    def _method_values(
        self,
        node: ast.Call,
        func: ast.Attribute,
        arguments: list[list[Value] | None],
        depth: int,
    ) -> list[Value] | None:
        receiver = self.values(func.value, depth + 1)
        if receiver is None:
            return None
        method = func.attr
        if all(item.is_path for item in receiver):
            if method in _IDENTITY_PATH_METHODS and not arguments:
                return receiver
            if method == "joinpath":
                return self._combine(
                    [receiver, *arguments], lambda texts: Value(posixpath.join(*texts), True)
                )
            if method == "with_name" and len(arguments) == 1:
                return self._combine(
                    [receiver, arguments[0]],
                    lambda parts: Value(
                        posixpath.join(posixpath.dirname(parts[0]), parts[1]), True
                    ),
                )
            if method == "with_suffix" and len(arguments) == 1:
                return self._combine(
                    [receiver, arguments[0]],
                    lambda parts: Value(posixpath.splitext(parts[0])[0] + parts[1], True),
                )
            return None
        if method == "join" and len(receiver) == 1 and len(node.args) == 1:
            return self._join_values(receiver[0].text, node.args[0], depth)
        if method == "format" and len(receiver) == 1:
            template = receiver[0].text
            if _SIMPLE_FORMAT.fullmatch(template) is None:
                return None
            return self._combine(arguments, lambda texts: Value(template.format(*texts)))
        return None

    def _join_values(self, separator: str, argument: ast.AST, depth: int) -> list[Value] | None:
        """``'/'.join(['tests', name])``: a literal sequence of single strings."""
        if not isinstance(argument, (ast.List, ast.Tuple)):
            return None
        parts = [self.values(element, depth + 1) for element in argument.elts]
        return self._combine(parts, lambda texts: Value(separator.join(texts)))

    def _union(self, elements: Sequence[ast.AST], depth: int) -> list[Value] | None:
        """Candidates of any element of a literal sequence (a loop over ``['a', 'b']``)."""
        union: list[Value] = []
        for element in elements:
            found = self.values(element, depth + 1)
            if not found:
                return None
            union.extend(found)
            if len(union) > _MAX_CANDIDATES:
                return None
        return union or None

    def _attribute_values(self, node: ast.Attribute, depth: int) -> list[Value] | None:
        if self.qualname(node, depth + 1) == "os.sep":
            return [Value("/")]
        if node.attr not in ("parent", "name", "stem"):
            return None
        receiver = self._path_values(node.value, depth + 1)
        if receiver is None:
            return None
        if node.attr == "parent":
            return [Value(posixpath.dirname(item.text) or ".", True) for item in receiver]
        if node.attr == "name":
            return [Value(posixpath.basename(item.text)) for item in receiver]
        return [Value(posixpath.splitext(posixpath.basename(item.text))[0]) for item in receiver]

    @staticmethod
    def _combine(
        parts: Sequence[list[Value] | None],
        build: Callable[[list[str]], Value],
    ) -> list[Value] | None:
        """Apply ``build`` to every combination of the parts' candidates (bounded)."""
        if any(part is None or not part for part in parts):
            return None
        options = [part for part in parts if part is not None]
        total = 1
        for part in options:
            total *= len(part)
            if total > _MAX_CANDIDATES:
                return None
        combined: list[Value] = []
        for choice in itertools.product(*options):
            value = build([item.text for item in choice])
            if len(value.text) > _MAX_TEXT:
                return None
            combined.append(value)
        return combined


def _percent_format(template: str, argument: str) -> list[Value] | None:
    """``'%s/x' % name`` with a single ``%s``."""
    if template.count("%") != 1 or "%s" not in template:
        return None
    return [Value(template.replace("%s", argument, 1))]
