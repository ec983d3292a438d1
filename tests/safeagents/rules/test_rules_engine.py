"""Matching semantics: combinators, fields, argv, vars, macros, exceptions, detectors."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from rules_testkit import BrokenDetector, ContentDetector, write_pack, write_rule

from safeagents._actions import Effect, ToolCall
from safeagents._detector import CallContext, Detector, SessionState
from safeagents.rules import Engine, RuleLoadError, RuleSet

CALL = ToolCall("c1", "bash", {"command": "x"})


def engine_with(
    tmp_path: Path, match: Any, detectors: Mapping[str, Detector] | None = None, **kw: Any
) -> Engine:
    write_rule(tmp_path, "r", match, **kw)
    return Engine(RuleSet.load([tmp_path]), detectors or {})


def fires(engine: Engine, *effects: Effect, call: ToolCall = CALL, harness: str = "pi") -> bool:
    return bool(engine.check_effects(effects, call=call, harness=harness))


WRITE_TEST = Effect("write", path="/workspace/tests/test_a.py", content="assert f() == 1\n")
DELETE_TEST = Effect("delete", path="/workspace/tests/test_a.py")
DELETE_SRC = Effect("delete", path="/workspace/src/a.py")
RM = Effect("exec", argv0="rm", argv=("rm", "-rf", "tests"), command="rm -rf tests")


@pytest.mark.parametrize(
    "match, effect, expected",
    [
        ({"effect": "delete"}, DELETE_SRC, True),
        ({"effect": ["delete", "move"]}, WRITE_TEST, False),
        ({"effect": {"in": ["write"]}, "path": {"glob": "tests/**"}}, WRITE_TEST, True),
        ({"all": [{"effect": "delete"}, {"path": {"glob": "tests/**"}}]}, DELETE_SRC, False),
        ({"all": [{"effect": "delete"}, {"path": {"glob": "tests/**"}}]}, DELETE_TEST, True),
        ({"any": [{"effect": "write"}, {"path": {"glob": "src/**"}}]}, DELETE_SRC, True),
        ({"any": [{"effect": "write"}, {"path": {"glob": "src/**"}}]}, DELETE_TEST, False),
        ({"any": []}, DELETE_TEST, False),
        ({"all": []}, DELETE_TEST, True),
        ({"effect": "delete", "not": {"path": {"glob": "tests/**"}}}, DELETE_SRC, True),
        ({"effect": "delete", "not": {"path": {"glob": "tests/**"}}}, DELETE_TEST, False),
        ({"not": [{"effect": "write"}, {"effect": "exec"}]}, DELETE_TEST, True),
        ({"not": [{"effect": "write"}, {"effect": "delete"}]}, DELETE_TEST, False),
        ({"url": {"contains": "x"}}, DELETE_TEST, False),  # absent field matches nothing
        ({"not": {"url": {"contains": "x"}}}, DELETE_TEST, True),  # ... except under not
        ({"content": {"regex": r"assert\s+f\(\)"}}, WRITE_TEST, True),
        ({"content": {"regex": "^assert f$"}}, WRITE_TEST, False),
        ({"content": {"contains": ["nope", "== 1"]}}, WRITE_TEST, True),
        ({"path": "/workspace/tests/test_a.py"}, WRITE_TEST, True),
        ({"path": {"equals": "tests/test_a.py"}}, WRITE_TEST, False),
        ({"path": {"glob": "*.py", "regex": "src"}}, WRITE_TEST, False),
        ({"path": {"glob": "*.py", "contains": "tests"}}, WRITE_TEST, True),
        ({"new_file": False, "effect": "write"}, WRITE_TEST, True),
        ({"new_file": True}, WRITE_TEST, False),
        ({"opaque": {"in": [True]}}, RM, False),
        ({"argv": "-rf"}, RM, True),
        ({"argv": {"glob": "tests/**"}}, RM, True),
        ({"argv": {"regex": "^-r", "contains": "f"}}, RM, True),
        ({"argv": {"equals": "rm", "contains": "f"}}, RM, False),  # one element must pass both
        ({"argv0": {"regex": "(^|/)rm$"}, "command": {"contains": "tests"}}, RM, True),
        ({"tool": "bash", "harness": {"glob": "p*"}}, RM, True),
        ({"harness": "codex"}, RM, False),
    ],
)
def test_condition_semantics(tmp_path: Path, match: Any, effect: Effect, expected: bool) -> None:
    assert fires(engine_with(tmp_path, match), effect) is expected


def test_vars_and_lists_expand_in_place(tmp_path: Path) -> None:
    write_pack(
        tmp_path,
        vars={"hidden": ["/tests", "/oracle"]},
        lists={"kinds": ["read", "search"]},
        macros={"is_hidden": {"path": {"glob": "$hidden/**"}}},
    )
    write_rule(tmp_path, "r", {"effect": "$kinds", "macro": "is_hidden"})
    default = Engine(RuleSet.load([tmp_path]))
    assert fires(default, Effect("read", path="/oracle/answer.txt"))
    assert not fires(default, Effect("write", path="/oracle/answer.txt"))
    assert not fires(default, Effect("read", path="/secret/answer.txt"))
    tuned = Engine(RuleSet.load([tmp_path], vars={"hidden": "/secret"}))
    assert fires(tuned, Effect("read", path="/secret/answer.txt"))
    assert not fires(tuned, Effect("read", path="/oracle/answer.txt"))


def test_dollar_dollar_is_a_literal_dollar(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, {"command": {"contains": "$$HOME/.ssh"}})
    assert fires(engine, Effect("exec", command="cat $HOME/.ssh/id_rsa"))


def test_nested_macros(tmp_path: Path) -> None:
    write_pack(
        tmp_path,
        macros={
            "is_py": {"path": {"glob": "*.py"}},
            "is_test_py": {"all": [{"macro": "is_py"}, {"path": {"glob": "tests/**"}}]},
        },
    )
    write_rule(tmp_path, "r", {"effect": "delete", "macro": "is_test_py"})
    engine = Engine(RuleSet.load([tmp_path]))
    assert fires(engine, DELETE_TEST) and not fires(engine, DELETE_SRC)
    assert RuleSet.load([tmp_path]).packs[0].macros == ("is_py", "is_test_py")


def test_exceptions_and_first_matching_effect(tmp_path: Path) -> None:
    engine = engine_with(
        tmp_path,
        {"effect": "delete"},
        exceptions=[{"name": "scratch", "match": {"path": {"glob": "/tmp/**"}}}],
    )
    scratch = Effect("delete", path="/tmp/x")
    assert not fires(engine, scratch)
    [finding] = engine.check_effects([scratch, DELETE_SRC, DELETE_TEST], call=CALL, harness="pi")
    assert finding.effect == DELETE_SRC  # one finding per rule: the first non-excepted effect


def test_finding_fields_and_message(tmp_path: Path) -> None:
    message = "{rule}/{category}/{severity}: {summary} [{effect} {path} {dest} {url} {tool}] {nope}"
    engine = engine_with(tmp_path, {"effect": "delete"}, message=message, action="flag")
    [finding] = engine.check_effects([DELETE_TEST], call=CALL, harness="pi")
    assert finding.message == (
        "r/other/high: delete /workspace/tests/test_a.py "
        "[delete /workspace/tests/test_a.py   bash] {nope}"
    )
    assert finding.to_json() == {
        "rule_id": "r",
        "category": "other",
        "severity": "high",
        "action": "flag",
        "tool_call_id": "c1",
        "tool": "bash",
        "summary": "delete /workspace/tests/test_a.py",
    }


def test_disabled_rules_do_not_fire(tmp_path: Path) -> None:
    assert not fires(engine_with(tmp_path, {"effect": "delete"}, enabled=False), DELETE_SRC)


def test_session_effects_are_appended_after_checking(tmp_path: Path) -> None:
    seen: list[int] = []

    class History(Detector):
        name = "history"

        def matches(self, effect: Effect, context: CallContext) -> bool:
            seen.append(len(context.session.effects))
            return any(e.kind == "read" for e in context.session.effects)

    engine = engine_with(tmp_path, {"detector": "history"}, {"history": History()})
    session = SessionState()
    read = Effect("read", path="/workspace/tests/t.py")
    write = Effect("write", path="/workspace/a.py", content="x")
    assert not engine.check_effects([read], call=CALL, harness="pi", session=session)
    assert session.effects == [read]
    assert engine.check_effects([write], call=CALL, harness="pi", session=session)
    assert seen == [0, 1] and len(session.effects) == 2


def test_detectors_match_and_a_failed_detector_fails_closed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    needle = ContentDetector()
    detectors = {"has-needle": needle, "broken": BrokenDetector()}
    match = {"any": [{"detector": "broken"}, {"effect": "write", "detector": "has-needle"}]}
    engine = engine_with(tmp_path, match, detectors)
    [hit] = engine.check_effects(
        [Effect("write", path="/w/a.py", content="x NEEDLE")], call=CALL, harness="pi"
    )
    assert hit.hacked and hit.category == "other"
    [undecided] = engine.check_effects([Effect("exec", command="NEEDLE")], call=CALL, harness="pi")
    assert undecided.unanalysable and not undecided.hacked
    assert undecided.action == "reject" and undecided.rule_id == "r"
    assert "detector 'broken' failed" in undecided.summary
    assert "could not be checked" in undecided.message
    assert [e.kind for e in needle.seen] == ["write"]  # not asked for the exec
    assert "detector 'broken' raised" in caplog.text
    assert any(r.levelno == logging.ERROR for r in caplog.records)


def test_a_failed_detector_not_consulted_decides_nothing(tmp_path: Path) -> None:
    engine = engine_with(
        tmp_path, {"effect": "delete", "detector": "broken"}, {"broken": BrokenDetector()}
    )
    assert not fires(engine, Effect("write", path="/w/a.py", content="x"))
    [finding] = engine.check_effects([DELETE_SRC], call=CALL, harness="pi")
    assert finding.unanalysable


def test_a_failed_detector_in_an_exception_does_not_exempt(tmp_path: Path) -> None:
    exceptions = [{"name": "never-sure", "match": {"detector": "broken"}}]
    engine = engine_with(
        tmp_path, {"effect": "delete"}, {"broken": BrokenDetector()}, exceptions=exceptions
    )
    [finding] = engine.check_effects([DELETE_SRC], call=CALL, harness="pi")
    assert finding.unanalysable and finding.action == "reject" and not finding.hacked


def test_a_rule_undecided_on_one_effect_still_fires_on_the_next(tmp_path: Path) -> None:
    match = {"any": [{"effect": "exec", "detector": "broken"}, {"effect": "delete"}]}
    engine = engine_with(tmp_path, match, {"broken": BrokenDetector()})
    findings = engine.check_effects([RM, DELETE_SRC, RM], call=CALL, harness="pi")
    assert [(f.unanalysable, f.hacked) for f in findings] == [(True, False), (False, True)]


def test_a_rule_needing_an_absent_field_is_not_evaluated(tmp_path: Path) -> None:
    # the fail-closed rules ask for `unanalysable`, which nearly every effect lacks
    needle = ContentDetector()
    match = {"all": [{"detector": "has-needle"}, {"unanalysable": ["budget"]}]}
    engine = engine_with(tmp_path, match, {"has-needle": needle})
    assert not fires(engine, Effect("exec", command="NEEDLE"), Effect("write", content="NEEDLE"))
    assert needle.seen == []
    marked = Effect("exec", command="x", content="NEEDLE", opaque=True, unanalysable="budget")
    assert fires(engine, marked)
    assert needle.seen == [marked]


def test_unknown_detector_is_reported_where_it_is_referenced(tmp_path: Path) -> None:
    write_pack(tmp_path, macros={"m": {"detector": "in-macro"}})
    rule = write_rule(tmp_path, "r", {"any": [{"detector": "has-neeedle"}, {"macro": "m"}]})
    expected = [
        f"{rule}:11:15: unknown detector 'has-neeedle' (did you mean 'has-needle'?)",
        f"{tmp_path / 'pack.yaml'}:4:15: unknown detector 'in-macro' (known: has-needle)",
    ]
    rules = RuleSet.load([tmp_path])
    with pytest.raises(RuleLoadError) as caught:
        Engine(rules, {"has-needle": ContentDetector()})
    assert [str(e) for e in caught.value.errors] == expected
    with pytest.raises(RuleLoadError) as caught:
        RuleSet.load([tmp_path], detectors=["has-needle"])
    assert [str(e) for e in caught.value.errors] == expected


def test_detector_names_are_checked_only_when_given(tmp_path: Path) -> None:
    write_rule(tmp_path, "r", {"detector": "custom"})
    assert len(RuleSet.load([tmp_path])) == 1
    assert len(RuleSet.load([tmp_path], detectors={"custom"})) == 1
    with pytest.raises(RuleLoadError, match=r"unknown detector 'custom' \(none registered\)"):
        RuleSet.load([tmp_path], detectors=())
    with pytest.raises(RuleLoadError, match="none registered"):
        Engine(RuleSet.load([tmp_path]))


def test_kind_index_and_triggers_keep_unpinned_rules(tmp_path: Path) -> None:
    write_rule(tmp_path, "pinned", {"effect": "delete", "path": {"glob": "*.py"}})
    write_rule(tmp_path, "negated", {"not": {"effect": "delete"}})
    write_rule(tmp_path, "either", {"any": [{"effect": "read"}, {"command": {"contains": "x"}}]})
    engine = Engine(RuleSet.load([tmp_path]))
    found = engine.check_effects([DELETE_SRC, RM, Effect("read")], call=CALL, harness="pi")
    assert [(f.rule_id, f.effect.kind) for f in found] == [
        ("pinned", "delete"),
        ("negated", "exec"),
        ("either", "read"),
    ]
