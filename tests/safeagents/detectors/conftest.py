"""Shared builders for detector tests: effects and call contexts with session history."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import CallContext, SessionState

ContextFactory = Callable[..., CallContext]


def build_context(outputs: Sequence[str] = (), effects: Sequence[Effect] = ()) -> CallContext:
    return CallContext(
        call=ToolCall(id="c1", name="write"),
        harness="generic",
        analysis=AnalysisContext(),
        session=SessionState(effects=list(effects), tool_outputs=list(outputs)),
    )


@pytest.fixture
def context() -> CallContext:
    """A call with no session history."""
    return build_context()


@pytest.fixture
def make_context() -> ContextFactory:
    """Build a call context whose session saw ``outputs`` and ``effects`` earlier."""
    return build_context
