"""Errors raised while loading rules: each names the file, line and column."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

__all__ = ["ErrorSink", "RuleError", "RuleLoadError", "did_you_mean"]


class RuleError(Exception):
    """One problem in a rule source, at ``file:line:col`` (1-based).

    A ``line`` of 0 means the problem has no position (a ``--var`` override, a
    missing path); ``str()`` then reads ``file: message``.
    """

    def __init__(self, file: str, line: int, col: int, message: str) -> None:
        super().__init__(file, line, col, message)
        self.file = file
        self.line = line
        self.col = col
        self.message = message

    def __str__(self) -> str:
        if self.line <= 0:
            return f"{self.file}: {self.message}"
        return f"{self.file}:{self.line}:{self.col}: {self.message}"

    def __repr__(self) -> str:
        return f"RuleError({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleError) and other.args == self.args

    def __hash__(self) -> int:
        return hash(self.args)


class RuleLoadError(Exception):
    """Every problem found while loading rules; ``str()`` lists one per line."""

    def __init__(self, errors: Sequence[RuleError]) -> None:
        self.errors: list[RuleError] = list(errors)
        super().__init__("\n".join(str(error) for error in self.errors))

    def __str__(self) -> str:
        return "\n".join(str(error) for error in self.errors)


class ErrorSink:
    """Collects :class:`RuleError` values in order, dropping exact duplicates."""

    def __init__(self) -> None:
        self.errors: list[RuleError] = []
        self._seen: set[RuleError] = set()

    def add(self, error: RuleError) -> None:
        if error not in self._seen:
            self._seen.add(error)
            self.errors.append(error)

    def extend(self, errors: Iterable[RuleError]) -> None:
        for error in errors:
            self.add(error)

    def __bool__(self) -> bool:
        return bool(self.errors)

    def raise_if_any(self) -> None:
        if self.errors:
            raise RuleLoadError(self.errors)


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` when a candidate is close to ``word``, else ``""``."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
