"""Shared builders for detector tests: effects and call contexts with session history."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from detector_testkit import build_context

from safeagents._detector import CallContext

ContextFactory = Callable[..., CallContext]


@pytest.fixture
def context() -> CallContext:
    """A call with no session history."""
    return build_context()


@pytest.fixture
def make_context() -> ContextFactory:
    """Build a call context whose session saw ``outputs`` and ``effects`` earlier."""
    return build_context
