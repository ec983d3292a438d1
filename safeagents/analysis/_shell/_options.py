"""A small GNU-style option parser for command handlers."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Spec:
    """Which options of a command take a value (``-n 5``, ``-n5``, ``--lines=5``)."""

    valued: frozenset[str] = frozenset()
    posix: bool = False
    """Options end at the first operand (``timeout 5 rm -f x``: ``-f`` belongs to ``rm``)."""


_SPECS: dict[tuple[Hashable, bool], Spec] = {}
_MAX_SPECS = 1_024


def spec(valued: Iterable[str] = (), *, posix: bool = False) -> Spec:
    """The :class:`Spec` of ``valued`` options, built once per distinct (hashable) argument."""
    if not isinstance(valued, Hashable):
        return Spec(frozenset(valued), posix)
    key = (valued, posix)
    found = _SPECS.get(key)
    if found is None:
        found = Spec(frozenset(valued), posix)
        if len(_SPECS) < _MAX_SPECS:
            _SPECS[key] = found
    return found


@dataclass(slots=True)
class Parsed:
    """Options in order (name, value) and operands with their index in the argument list."""

    options: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[str]:
        return [value for name, value in self.options if name in names and value is not None]

    def value(self, *names: str) -> str | None:
        found = self.values(*names)
        return found[-1] if found else None


def parse(args: list[str], options: Spec) -> Parsed:
    """Split ``args`` into options and operands following ``options``."""
    found: list[tuple[str, str | None]] = []
    operands: list[str] = []
    indices: list[int] = []
    valued = options.valued
    count = len(args)
    index = 0
    while index < count:
        arg = args[index]
        if arg[:1] != "-" or arg == "-":
            operands.append(arg)
            indices.append(index)
            if options.posix:
                operands.extend(args[index + 1 :])
                indices.extend(range(index + 1, count))
                break
        elif arg == "--":
            operands.extend(args[index + 1 :])
            indices.extend(range(index + 1, count))
            break
        elif arg[1] == "-":
            name, equals, value = arg.partition("=")
            if equals:
                found.append((name, value))
            elif name in valued and index + 1 < count:
                index += 1
                found.append((name, args[index]))
            else:
                found.append((name, None))
        else:
            index = _short_cluster(found, args, index, valued)
        index += 1
    return Parsed(found, operands, indices)


def _short_cluster(
    found: list[tuple[str, str | None]], args: list[str], index: int, valued: frozenset[str]
) -> int:
    """Record ``-abc`` as ``-a -b -c``; a valued letter takes the rest or the next argument."""
    arg = args[index]
    for position in range(1, len(arg)):
        name = "-" + arg[position]
        if name in valued:
            rest = arg[position + 1 :]
            if rest:
                found.append((name, rest))
            elif index + 1 < len(args):
                found.append((name, args[index + 1]))
                return index + 1
            else:
                found.append((name, None))
            return index
        found.append((name, None))
    return index
