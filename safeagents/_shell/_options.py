"""A small GNU-style option parser for command handlers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Spec:
    """Which options of a command take a value (``-n 5``, ``-n5``, ``--lines=5``)."""

    valued: frozenset[str] = frozenset()
    posix: bool = False
    """Options end at the first operand (``timeout 5 rm -f x``: ``-f`` belongs to ``rm``)."""


def spec(valued: Iterable[str] = (), *, posix: bool = False) -> Spec:
    return Spec(frozenset(valued), posix)


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
    parsed = Parsed()
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            _operands(parsed, args, index + 1)
            break
        if arg.startswith("--") and len(arg) > 2:
            index = _long(parsed, args, index, options)
        elif arg.startswith("-") and len(arg) > 1:
            index = _short_cluster(parsed, args, index, options)
        else:
            parsed.operands.append(arg)
            parsed.indices.append(index)
            if options.posix:
                _operands(parsed, args, index + 1)
                break
        index += 1
    return parsed


def _operands(parsed: Parsed, args: list[str], start: int) -> None:
    parsed.operands.extend(args[start:])
    parsed.indices.extend(range(start, len(args)))


def _long(parsed: Parsed, args: list[str], index: int, options: Spec) -> int:
    arg = args[index]
    name, equals, value = arg.partition("=")
    if equals:
        parsed.options.append((name, value))
    elif name in options.valued and index + 1 < len(args):
        parsed.options.append((name, args[index + 1]))
        return index + 1
    else:
        parsed.options.append((name, None))
    return index


def _short_cluster(parsed: Parsed, args: list[str], index: int, options: Spec) -> int:
    arg = args[index]
    for position in range(1, len(arg)):
        name = "-" + arg[position]
        if name in options.valued:
            rest = arg[position + 1 :]
            if rest:
                parsed.options.append((name, rest))
            elif index + 1 < len(args):
                parsed.options.append((name, args[index + 1]))
                return index + 1
            else:
                parsed.options.append((name, None))
            return index
        parsed.options.append((name, None))
    return index
