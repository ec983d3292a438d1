"""Builders for detector tests: call contexts as the engine makes them, and written files."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import CallContext, SessionState
from safeagents.rules import RuleSet, list_matcher

TEST_PATHS = list_matcher(RuleSet.load().packs, "test_files")
"""The bundled packs' ``test_files``, which the engine hands detectors."""


def build_context(
    outputs: Sequence[str] = (),
    effects: Sequence[Effect] = (),
    *,
    call: ToolCall | None = None,
    harness: str = "generic",
    arguments: dict[str, Any] | None = None,
) -> CallContext:
    """A call (``write``, or ``call``) whose session saw ``outputs`` and ``effects`` earlier."""
    return CallContext(
        call=call or ToolCall(id="c1", name="write", arguments=arguments or {}),
        harness=harness,
        analysis=AnalysisContext(),
        session=SessionState(effects=list(effects), tool_outputs=list(outputs)),
        is_test_path=TEST_PATHS,
    )


def write(content: str, path: str = "/workspace/solution.py") -> Effect:
    return Effect("write", path=path, content=content)
