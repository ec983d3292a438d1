"""Builders for detector tests: call contexts as the engine makes them, and written files."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import CallContext, Detector, SessionState
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


def edit_context(
    output: str, path: str, old: str, new: str, added: str | None = None
) -> tuple[Effect, CallContext]:
    """A claude-code ``Edit`` of ``old`` to ``new`` in ``path`` after a call that printed
    ``output``, and its effect, which adds ``added`` (``new`` by default)."""
    effect = Effect("write", path=path, content=None, added=added or new, removed=old)
    call = ToolCall("c9", "Edit", {"file_path": path, "old_string": old, "new_string": new})
    context = build_context([output], call=call, harness="claude-code")
    return effect, CallContext(
        context.call,
        context.harness,
        context.analysis,
        context.session,
        effects=(effect,),
        is_test_path=context.is_test_path,
    )


def after_reading(output: str, path: str = "/workspace/tests/test_x.py") -> CallContext:
    """A call whose session read ``path`` earlier, which showed ``output``."""
    context = build_context()
    context.session.record_call([Effect("read", path=path)])
    context.session.observe_output(output)
    return context


def write(content: str, path: str = "/workspace/solution.py") -> Effect:
    return Effect("write", path=path, content=content)


TableTest = Callable[[str, CallContext], None]


def table_tests(
    detector: Detector, match: Mapping[str, str], no_match: Mapping[str, str]
) -> tuple[TableTest, TableTest]:
    """``test_matches`` and ``test_near_misses``: every source written to a solution file."""

    @pytest.mark.parametrize("source", match.values(), ids=match.keys())
    def test_matches(source: str, context: CallContext) -> None:
        assert detector.matches(write(source), context)

    @pytest.mark.parametrize("source", no_match.values(), ids=no_match.keys())
    def test_near_misses(source: str, context: CallContext) -> None:
        assert not detector.matches(write(source), context)

    return test_matches, test_near_misses
