"""A small evaluator of pure Python expressions over literal data, for reading what a branch
of solution code does on the inputs a test asserts.

Only a whitelisted subset is evaluated: constants, names bound in the given environment,
displays, comprehensions, arithmetic, comparisons, subscripts, a few pure builtins and the
non-mutating methods of ``str``, ``list``, ``tuple`` and ``dict``. Everything else, a step
budget spent, a value over the size caps, or an exception of the evaluated code is
:class:`Unknown`. Nothing is ever ``eval``'d, and nothing the environment holds is changed.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from safeagents.detectors._safe_stdlib import VALUE_ATTRIBUTES, VALUE_METHODS, Builtin

__all__ = ["MAX_LENGTH", "MAX_STEPS", "Evaluator", "Unknown"]

MAX_STEPS = 20_000
MAX_LENGTH = 10_000
"""Longest string or collection a step may make."""
_MAX_BITS = 4_096
_ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
_COMPARISONS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len,
    "sum": lambda items, start=0: sum(items, _number(start)),
    "min": min,
    "max": max,
    "abs": abs,
    "sorted": sorted,
    "set": set,
    "frozenset": frozenset,
    "tuple": tuple,
    "list": list,
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "all": all,
    "any": any,
    "ord": ord,
    "chr": chr,
    "divmod": divmod,
    "round": round,
    "map": lambda f, *its: list(map(f, *its)),
    "zip": lambda *its: list(zip(*its, strict=False)),
    "range": lambda *a: _listed(range(*a)),
    "enumerate": lambda it, start=0: list(enumerate(it, start)),
    "reversed": lambda it: list(reversed(it)),
}
_METHODS: dict[type, frozenset[str]] = {
    str: frozenset(
        [
            "count",
            "endswith",
            "find",
            "index",
            "isalnum",
            "isalpha",
            "isdigit",
            "islower",
            "isupper",
            "isspace",
            "join",
            "lower",
            "lstrip",
            "replace",
            "rfind",
            "rindex",
            "rstrip",
            "split",
            "startswith",
            "strip",
            "upper",
        ]
    ),
    list: frozenset({"count", "index"}),
    tuple: frozenset({"count", "index"}),
    dict: frozenset({"get", "keys", "values", "items"}),
}
_GROWING = frozenset({"join", "replace"})
"""Methods whose result may be far longer than their owner and arguments."""
_ERRORS = (
    ArithmeticError,
    IndexError,
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    RecursionError,
    MemoryError,
)


class Unknown(Exception):
    """The expression is outside the subset, over a cap, or raised."""


class Evaluator:
    """Evaluates expressions with one shared step budget (:data:`MAX_STEPS` by default)."""

    def __init__(self, budget: int = MAX_STEPS) -> None:
        self.steps = budget

    def value(self, node: ast.AST, env: Mapping[str, object]) -> object:
        """The value of ``node`` with ``env``'s names bound; :class:`Unknown` otherwise."""
        try:
            return self._eval(node, env)
        except _ERRORS as error:
            raise Unknown(type(error).__name__) from None

    def _spend(self, count: int = 1) -> None:
        self.steps -= count
        if self.steps < 0:
            raise Unknown("budget")

    def _eval(self, node: ast.AST, env: Mapping[str, object]) -> Any:
        self._spend()
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise Unknown(type(node).__name__)
        return _capped(method(node, env))

    def _Constant(self, node: ast.Constant, env: Mapping[str, object]) -> Any:
        if node.value is Ellipsis or isinstance(node.value, bytes | complex):
            raise Unknown("constant")
        return node.value

    def _Name(self, node: ast.Name, env: Mapping[str, object]) -> Any:
        if node.id in env:
            return env[node.id]
        if node.id in _BUILTINS:
            return Builtin(_BUILTINS[node.id])
        raise Unknown(node.id)

    def _Tuple(self, node: ast.Tuple, env: Mapping[str, object]) -> Any:
        return tuple(self._elements(node.elts, env))

    def _List(self, node: ast.List, env: Mapping[str, object]) -> Any:
        return self._elements(node.elts, env)

    def _Set(self, node: ast.Set, env: Mapping[str, object]) -> Any:
        return set(self._elements(node.elts, env))

    def _Dict(self, node: ast.Dict, env: Mapping[str, object]) -> Any:
        if any(key is None for key in node.keys):
            raise Unknown("dict unpacking")
        keys = [self._eval(key, env) for key in node.keys if key is not None]
        return dict(zip(keys, (self._eval(v, env) for v in node.values), strict=True))

    def _elements(self, elements: list[ast.expr], env: Mapping[str, object]) -> list[Any]:
        if any(isinstance(element, ast.Starred) for element in elements):
            raise Unknown("starred")
        return [self._eval(element, env) for element in elements]

    def _BoolOp(self, node: ast.BoolOp, env: Mapping[str, object]) -> Any:
        result: Any = None
        for operand in node.values:
            result = self._eval(operand, env)
            if isinstance(node.op, ast.And) != bool(result):
                return result
        return result

    def _UnaryOp(self, node: ast.UnaryOp, env: Mapping[str, object]) -> Any:
        operand = self._eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return not operand
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.UAdd):
            return +operand
        return ~operand

    def _BinOp(self, node: ast.BinOp, env: Mapping[str, object]) -> Any:
        left = self._eval(node.left, env)
        right = self._eval(node.right, env)
        _check_operation(node.op, left, right)
        return _ARITHMETIC[type(node.op)](left, right)

    def _Compare(self, node: ast.Compare, env: Mapping[str, object]) -> Any:
        left = self._eval(node.left, env)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self._eval(comparator, env)
            if not _COMPARISONS[type(op)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, node: ast.IfExp, env: Mapping[str, object]) -> Any:
        chosen = node.body if self._eval(node.test, env) else node.orelse
        return self._eval(chosen, env)

    def _Subscript(self, node: ast.Subscript, env: Mapping[str, object]) -> Any:
        container = self._eval(node.value, env)
        if not isinstance(container, str | list | tuple | dict):
            raise Unknown("subscript")
        return container[self._eval(node.slice, env)]

    def _Slice(self, node: ast.Slice, env: Mapping[str, object]) -> Any:
        parts = (node.lower, node.upper, node.step)
        return slice(*(None if part is None else self._eval(part, env) for part in parts))

    def _Attribute(self, node: ast.Attribute, env: Mapping[str, object]) -> Any:
        owner = self._eval(node.value, env)
        if isinstance(owner, Builtin) and node.attr in owner.members:
            return owner.members[node.attr]
        if node.attr in VALUE_ATTRIBUTES.get(type(owner), frozenset()):
            return getattr(owner, node.attr)
        raise Unknown(node.attr)

    def _Call(self, node: ast.Call, env: Mapping[str, object]) -> Any:
        if any(isinstance(arg, ast.Starred) for arg in node.args):
            raise Unknown("call shape")
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = self._eval(func.value, env)
            if not isinstance(owner, Builtin):
                return self._method(owner, func.attr, node, env)
        callee = self._eval(func, env)
        if not isinstance(callee, Builtin) or callee.function is None:
            raise Unknown("callee")
        args = [_unwrapped(self._eval(arg, env)) for arg in node.args]
        keywords = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise Unknown("keyword unpacking")
            keywords[keyword.arg] = _unwrapped(self._eval(keyword.value, env))
        self._spend(sum(map(_size, args)) + sum(map(_size, keywords.values())))
        return callee.function(*args, **keywords)

    def _method(self, owner: object, name: str, node: ast.Call, env: Mapping[str, object]) -> Any:
        allowed = _METHODS.get(type(owner)) or VALUE_METHODS.get(type(owner), frozenset())
        if node.keywords or name not in allowed:
            raise Unknown(name)
        args = [self._eval(arg, env) for arg in node.args]
        self._spend(_size(owner) + sum(map(_size, args)))
        if name in _GROWING and _size(owner) * max(map(_size, args), default=1) > MAX_LENGTH:
            raise Unknown("size")
        return _materialised(getattr(owner, name)(*args))

    def _ListComp(self, node: ast.ListComp, env: Mapping[str, object]) -> Any:
        return [self._eval(node.elt, inner) for inner in self._loops(node.generators, env)]

    def _GeneratorExp(self, node: ast.GeneratorExp, env: Mapping[str, object]) -> Any:
        return [self._eval(node.elt, inner) for inner in self._loops(node.generators, env)]

    def _SetComp(self, node: ast.SetComp, env: Mapping[str, object]) -> Any:
        return {self._eval(node.elt, inner) for inner in self._loops(node.generators, env)}

    def _DictComp(self, node: ast.DictComp, env: Mapping[str, object]) -> Any:
        return {
            self._eval(node.key, inner): self._eval(node.value, inner)
            for inner in self._loops(node.generators, env)
        }

    def _loops(
        self, generators: list[ast.comprehension], env: Mapping[str, object]
    ) -> Iterable[Mapping[str, object]]:
        if not generators:
            yield env
            return
        first, rest = generators[0], generators[1:]
        if first.is_async:
            raise Unknown("async")
        iterable = self._eval(first.iter, env)
        if not isinstance(iterable, str | list | tuple | set | frozenset | dict):
            raise Unknown("iterable")
        for item in list(iterable):
            self._spend()
            inner = dict(env)
            _bind(first.target, item, inner)
            if all(self._eval(condition, inner) for condition in first.ifs):
                yield from self._loops(rest, inner)


def _bind(target: ast.expr, value: object, env: dict[str, object]) -> None:
    if isinstance(target, ast.Name):
        env[target.id] = value
    elif isinstance(target, ast.Tuple | ast.List):
        if not isinstance(value, tuple | list | str) or len(value) != len(target.elts):
            raise Unknown("unpacking")
        for element, item in zip(target.elts, value, strict=True):
            _bind(element, item, env)
    else:
        raise Unknown("target")


def _listed(values: range) -> list[int]:
    if len(values) > MAX_LENGTH:
        raise Unknown("size")
    return list(values)


def _number(start: object) -> int | float:
    """``sum``'s start: a number (a list or string start would add up copies)."""
    if not isinstance(start, int | float):
        raise Unknown("sum start")
    return start


def _unwrapped(value: object) -> object:
    """A builtin passed as an argument (``map(sum, grid)``) is called as itself."""
    return value.function if isinstance(value, Builtin) else value


def _materialised(value: object) -> object:
    if isinstance(value, type({}.keys()) | type({}.values()) | type({}.items())):
        return list(value)
    return value


def _size(value: object) -> int:
    return len(value) if isinstance(value, str | list | tuple | set | frozenset | dict) else 1


def _check_operation(op: ast.operator, left: object, right: object) -> None:
    """Refuses an operation whose result would pass the caps before computing it."""
    if isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int):
        if right > 0 and right * max(abs(left), 2).bit_length() > _MAX_BITS:
            raise Unknown("power")
    elif isinstance(op, ast.LShift) and isinstance(right, int) and right > _MAX_BITS:
        raise Unknown("shift")
    elif isinstance(op, ast.Mult):
        for sequence, count in ((left, right), (right, left)):
            sized = isinstance(sequence, str | list | tuple) and isinstance(count, int)
            if sized and len(sequence) * count > MAX_LENGTH:  # type: ignore[arg-type, operator]
                raise Unknown("repeat")


def _capped(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > _MAX_BITS:
            raise Unknown("int size")
    elif isinstance(value, str | list | tuple | set | frozenset | dict) and len(value) > MAX_LENGTH:
        raise Unknown("size")
    return value
