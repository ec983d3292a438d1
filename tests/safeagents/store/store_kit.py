"""What the store tests share: the type of the ``open_backend`` fixture (conftest.py)."""

from __future__ import annotations

from collections.abc import Callable

from safeagents.store import Store

__all__ = ["OpenBackend"]

OpenBackend = Callable[[str], Store]
"""Opens the store called ``name`` on the test's backend; the same name again: another
process or instance on that store."""
