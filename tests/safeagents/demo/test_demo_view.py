"""The demo's live view: turns printed in store order, calls marked allowed or blocked."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from safeagents._actions import ToolCall
from safeagents.demo import LiveView
from safeagents.demo._view import call_summary
from safeagents.store import FindingRecord, TurnRecord


def _chat_answer(text: str, *calls: tuple[str, str, str]) -> dict[str, Any]:
    tool_calls = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
        for cid, name, args in calls
    ]
    message = {"role": "assistant", "content": text, "tool_calls": tool_calls}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


def _turn(seq: int, kind: str, response: dict[str, Any], *findings: FindingRecord) -> TurnRecord:
    return TurnRecord(
        session_id="s",
        exchange=f"e{seq}",
        attempt=0,
        kind=kind,  # type: ignore[arg-type]
        status="ok",
        dialect="chat",
        harness="pi",
        model="m",
        stream=False,
        request={},
        response=response,
        findings=findings,
        seq=seq,
    )


def _finding(call_id: str, *, blocked: bool, action: str = "reject") -> FindingRecord:
    return FindingRecord(
        rule_id="test-file-deletion",
        category="test-tampering",
        severity="critical",
        action=action,
        tool_call_id=call_id,
        tool="bash",
        summary="delete /workspace/tests/t.py",
        message="Blocked by safeagents (test-file-deletion): do not delete [tests].",
        blocked=blocked,
    )


def test_turns_are_printed_in_store_order_with_verdicts() -> None:
    buffer = io.StringIO()
    view = LiveView(Console(file=buffer, width=200, color_system=None), settle=60)
    rm = _chat_answer("drop it", ("c1", "bash", '{"command": "rm tests/t.py"}'))
    fix = _chat_answer("fix it", ("c2", "write", '{"path": "a.py", "content": "x"}'))
    view.turn_recorded(_turn(2, "reask", fix))  # sinks may deliver out of order
    view.turn_recorded(_turn(1, "main", rm, _finding("c1", blocked=True)))
    view.flush()
    assert buffer.getvalue() == ""  # not settled yet
    view.flush(final=True)
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "model › drop it"
    assert lines[1].split() == ["✗", "blocked", "bash", "rm", "tests/t.py"]
    assert lines[2].strip() == "test-file-deletion: do not delete [tests]."
    assert lines[3].strip().startswith("↻ re-ask")
    assert lines[5].split() == ["✓", "allowed", "write", "a.py", "(1", "chars)"]
    assert (view.received, view.allowed, view.blocked) == (2, 1, 1)


def test_unblocked_findings_and_side_turns() -> None:
    buffer = io.StringIO()
    view = LiveView(Console(file=buffer, width=200, color_system=None))
    monitored = _chat_answer("", ("c1", "bash", '{"command": "rm tests/t.py"}'))
    view.turn_recorded(_turn(1, "main", monitored, _finding("c1", blocked=False)))
    view.turn_recorded(_turn(2, "side", _chat_answer("A title")))
    view.flush(final=True)
    lines = buffer.getvalue().splitlines()
    assert lines[0].split()[:2] == ["✓", "allowed"]
    assert lines[1].strip() == "test-file-deletion (reject): delete /workspace/tests/t.py"
    assert len(lines) == 2  # the side turn (a title request) is not shown


def test_call_summary_names_the_command_or_file() -> None:
    assert call_summary(ToolCall("1", "bash", {"command": "ls\n  -la\n"})) == "ls ⏎   -la"
    assert call_summary(ToolCall("1", "exec_command", {"cmd": ["bash", "-lc", "ls"]})) == (
        "bash -lc ls"
    )
    assert call_summary(ToolCall("1", "Write", {"file_path": "a.py", "content": "abc"})) == (
        "a.py (3 chars)"
    )
    assert call_summary(ToolCall("1", "read", {"path": "a.py"})) == "a.py"
    assert call_summary(ToolCall("1", "apply_patch", "*** Begin Patch")) == "*** Begin Patch"
    assert len(call_summary(ToolCall("1", "bash", {"command": "x" * 500}))) == 110
