"""A pack list of path globs as a predicate, for code outside the rules (the detectors)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

import re2

from safeagents.rules._compile import glob_to_regex
from safeagents.rules._model import Pack

__all__ = ["list_matcher"]


def list_matcher(packs: Iterable[Pack], name: str) -> Callable[[str], bool]:
    """Whether a path matches a glob of the list ``name`` of any of ``packs`` (as a rule's
    ``path: {glob: $name}`` would); no pack with that list: nothing matches."""
    globs = sorted({glob for pack in packs for glob in pack.lists.get(name, ())})
    if not globs:
        return _nothing
    pattern = re2.compile("|".join(f"(?:{glob_to_regex(glob)})" for glob in globs))

    @lru_cache(maxsize=1024)
    def matches(path: str) -> bool:
        return pattern.search(path) is not None

    return matches


def _nothing(path: str) -> bool:
    return False
