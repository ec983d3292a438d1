"""What one call's detectors learn about the session's outputs, worked out once."""

from __future__ import annotations

from detector_testkit import build_context

from safeagents.detectors._history import session_history


def test_a_derived_value_is_computed_once_per_history() -> None:
    context = build_context(["FAIL x_test.go:9: 1.0.0-beta.2 vs 1.0.0-beta.11"])
    history = session_history(context)
    calls: list[int] = []

    def compute() -> list[str]:
        calls.append(1)
        return [output.upper() for output in history.outputs]

    first = history.derived("upper", compute)
    assert history.derived("upper", compute) is first
    assert session_history(context).derived("upper", compute) is first  # the same call
    assert calls == [1]
    assert first == ["FAIL X_TEST.GO:9: 1.0.0-BETA.2 VS 1.0.0-BETA.11"]


def test_a_grown_session_gets_a_new_history() -> None:
    context = build_context(["one"])
    before = session_history(context).derived(
        "count", lambda: len(session_history(context).outputs)
    )
    context.session.tool_outputs.append("two")
    after = session_history(context).derived("count", lambda: len(session_history(context).outputs))
    assert (before, after) == (1, 2)
