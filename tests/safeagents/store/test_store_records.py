"""A stored finding is the engine's :class:`Finding` plus whether it blocked."""

from __future__ import annotations

from safeagents._actions import Effect
from safeagents.rules import Finding
from safeagents.store import HACK_ACTIONS, FindingRecord

FINDING = Finding(
    "r", "c", "high", "reject", "call_1", "bash", "delete x", "no!", effect=Effect("exec")
)


def test_a_record_is_the_finding_without_its_effect() -> None:
    record = FindingRecord.from_finding(FINDING, blocked=True)
    assert isinstance(record, Finding) and record.effect is None and record.blocked
    assert record == FindingRecord(
        "r", "c", "high", "reject", "call_1", "bash", "delete x", "no!", True
    )
    assert record.hacked and "reject" in HACK_ACTIONS


def test_the_json_shapes_are_unchanged() -> None:
    record = FindingRecord.from_finding(FINDING, blocked=False)
    summary = {
        "rule_id": "r",
        "category": "c",
        "severity": "high",
        "action": "reject",
        "tool_call_id": "call_1",
        "tool": "bash",
        "summary": "delete x",
    }
    assert FINDING.to_json() == record.to_json() == summary
    assert record.to_detail() == {**summary, "message": "no!", "blocked": False}
