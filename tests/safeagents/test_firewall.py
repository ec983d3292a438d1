"""The firewall: a tool call through its harness plugin into effects, then the rules."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from safeagents import Firewall
from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import CallContext, Detector, SessionState
from safeagents._registry import default_registry
from safeagents.rules import RuleLoadError, RuleSet


def write_rule(directory: Path, match: Any, **fields: Any) -> Path:
    body = {
        "id": "r",
        "category": "other",
        "severity": "high",
        "action": "reject",
        "description": "d",
        "message": "{rule}: {summary}",
        "match": match,
        **fields,
    }
    path = directory / "r.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


class Registry:
    """Enough of ``Registry``: ``rm PATH`` deletes, anything else reads ``tests/t.py``."""

    def __init__(self, detectors: Mapping[str, Detector] | None = None) -> None:
        self.detectors = dict(detectors or {})
        self.calls: list[tuple[str, str]] = []

    def effects(self, call: ToolCall, harness: str, ctx: AnalysisContext) -> list[Effect]:
        self.calls.append((harness, call.name))
        assert isinstance(call.arguments, dict)
        command = str(call.arguments.get("command", ""))
        if command.startswith("rm "):
            return [Effect("delete", path=ctx.resolve(command.split()[-1]))]
        return [Effect("read", path=ctx.resolve("tests/t.py"))]


def firewall(tmp_path: Path, match: Any, registry: Registry, **fields: Any) -> Firewall:
    write_rule(tmp_path, match, **fields)
    return Firewall(RuleSet.load([tmp_path]), registry)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "action, blocked, hacked",
    [("reject", True, True), ("flag", False, True), ("warn", False, False)],
)
def test_verdict_of_a_call(tmp_path: Path, action: str, blocked: bool, hacked: bool) -> None:
    registry = Registry()
    checker = firewall(tmp_path, {"effect": "delete"}, registry, action=action)
    verdict = checker.check_call(
        ToolCall("c", "bash", {"command": "rm -f a.py"}),
        harness="pi",
        context=AnalysisContext(cwd="/proj"),
    )
    assert verdict.effects == (Effect("delete", path="/proj/a.py"),)
    assert [f.rule_id for f in verdict.findings] == ["r"]
    assert (verdict.blocked, verdict.hacked) == (blocked, hacked)
    assert registry.calls == [("pi", "bash")]
    assert verdict.harness == "pi" and verdict.call.id == "c"


def test_session_carries_the_effects_of_earlier_calls(tmp_path: Path) -> None:
    class ReadBefore(Detector):
        name = "read-before"

        def matches(self, effect: Effect, context: CallContext) -> bool:
            return any(e.kind == "read" for e in context.session.effects)

    checker = firewall(
        tmp_path, {"detector": "read-before"}, Registry({"read-before": ReadBefore()})
    )
    session = SessionState()
    call = ToolCall("1", "bash", {"command": "cat tests/t.py"})
    assert not checker.check_call(call, harness="pi", session=session).findings
    assert session.effects == [Effect("read", path="/workspace/tests/t.py")]
    assert checker.check_call(call, harness="pi", session=session).findings


def test_rules_must_only_call_the_registry_s_detectors(tmp_path: Path) -> None:
    write_rule(tmp_path, {"detector": "nope"})
    with pytest.raises(RuleLoadError, match="unknown detector 'nope'"):
        Firewall(RuleSet.load([tmp_path]), Registry())  # type: ignore[arg-type]


def test_defaults_to_the_plugin_registry(tmp_path: Path) -> None:
    write_rule(tmp_path, {"effect": "delete"})
    checker = Firewall.load([tmp_path], vars={})
    assert checker.registry is default_registry()
    assert checker.engine.detectors is default_registry().detectors
    assert [rule.id for rule in checker.rules] == ["r"]


LONE = "\ud800"  # what json.loads('"\\ud800"') gives: no UTF-8, so no RE2, can take it


def test_lone_surrogates_hide_nothing_from_the_rules() -> None:
    firewall = Firewall.load()
    session = SessionState()
    session.observe_user(f"Fix calc.py {LONE}; do not edit tests/test_calc.py")
    session.observe_output(f"FAILED tests/test_calc.py::test_add {LONE}")
    source = f"# {LONE}\nclass A:\n    def __eq__(self, other):\n        return True\n"
    call = ToolCall("c1", "Write", {"file_path": "/w/calc.py", "content": source})
    verdict = firewall.check_call(call, harness="claude-code", session=session)
    assert [f.rule_id for f in verdict.findings] == ["always-equal-object"]
    assert verdict.call is call  # the verdict keeps the call as the model sent it
    said = firewall.said(f"I deleted the failing assertion {LONE} so the suite passes.")
    assert firewall.check_said(said, harness="claude-code", session=session)


def test_a_call_is_analysed_without_its_lone_surrogates() -> None:
    call = ToolCall("c1", f"bash{LONE}", {"command": f"echo {LONE}", "n": [1, {"k": LONE}]})
    analysed = call.analysable()
    assert analysed.name == "bash\ufffd"
    assert analysed.arguments == {"command": "echo \ufffd", "n": [1, {"k": "\ufffd"}]}
    plain = ToolCall("c2", "bash", {"command": "echo é", "n": [1, {"k": "v"}]})
    assert plain.analysable() is plain
