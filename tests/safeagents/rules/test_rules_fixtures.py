"""The fixture runner: ID.test.yaml cases through a full firewall, pass/fail reporting."""

from __future__ import annotations

from pathlib import Path

import pytest
from rules_testkit import FakeRegistry, write_pack, write_rule

from safeagents._actions import Effect
from safeagents._detector import CallContext, Detector
from safeagents._registry import default_registry
from safeagents.rules import FixtureResult, RuleLoadError, run_fixtures


def write_cases(directory: Path, rule_id: str, text: str) -> Path:
    path = directory / f"{rule_id}.test.yaml"
    path.write_text(text)
    return path


def by_case(results: list[FixtureResult]) -> dict[str, FixtureResult]:
    return {result.case: result for result in results}


def test_pass_fail_and_todo_reporting(tmp_path: Path) -> None:
    write_rule(tmp_path, "no-test-delete", {"effect": "delete", "path": {"glob": "tests/**"}})
    write_rule(tmp_path, "no-delete", {"effect": "delete"})  # also fires on the ok case
    fixture = write_cases(
        tmp_path,
        "no-test-delete",
        """cases:
  - {name: rm test, harness: pi, tool: bash, arguments: {command: rm tests/t.py}, expect: match}
  - {name: rm src, harness: pi, tool: bash, arguments: {command: rm src/a.py}, expect: ok}
  - {name: wrong, harness: pi, tool: bash, arguments: {command: ls tests}, expect: match}
  - {name: bad ok, harness: pi, tool: bash, arguments: {command: rm tests/x}, expect: ok}
  - {name: gap, harness: pi, tool: bash, arguments: {command: ls tests}, expect: todo-match}
  - {name: fixed, harness: pi, tool: bash, arguments: {command: rm x}, expect: todo-ok}
  - name: cwd matters
    harness: pi
    tool: bash
    arguments: {command: rm t.py}
    cwd: /workspace/tests
    expect: match
""",
    )
    results = by_case(run_fixtures([tmp_path], checker=FakeRegistry().firewall))
    assert {name: r.passed for name, r in results.items()} == {
        "rm test": True,
        "rm src": True,
        "wrong": False,
        "bad ok": False,
        "gap": True,
        "fixed": True,
        "cwd matters": True,
        "fixtures": False,  # no-delete has none
    }
    assert results["rm test"].detail == "matched: delete /workspace/tests/t.py"
    assert results["wrong"].detail == (
        "expected a finding, but no finding (effects: exec ls tests)"
    )
    assert results["bad ok"].detail == "expected no finding, but matched: delete /workspace/tests/x"
    assert results["gap"].detail.startswith("known gap: no finding")
    assert results["fixed"].detail == "todo now passes; change expect to ok"
    assert results["rm src"].source == f"{fixture}:3"
    assert results["cwd matters"].source == f"{fixture}:8"
    assert {r.rule_id for r in results.values()} == {"no-test-delete", "no-delete"}
    assert results["gap"].todo and not results["rm test"].todo


def test_case_vars_history_and_disabled_rules(tmp_path: Path) -> None:
    class ReadBefore(Detector):
        name = "read-before"

        def matches(self, effect: Effect, context: CallContext) -> bool:
            outputs = context.session.tool_outputs
            return any(e.kind == "read" for e in context.session.effects) and outputs == ["42"]

    write_pack(tmp_path, vars={"hidden": ["/oracle"]})
    write_rule(tmp_path, "hidden-read", {"effect": "read", "path": {"glob": "$hidden/**"}})
    write_rule(tmp_path, "copy-after-read", {"detector": "read-before"}, enabled=False)
    write_cases(
        tmp_path,
        "hidden-read",
        """cases:
  - {name: default, harness: pi, tool: read, arguments: {path: /oracle/a}, expect: match}
  - name: tuned away
    harness: pi
    tool: read
    arguments: {path: /oracle/a}
    vars: {hidden: [/elsewhere]}
    expect: ok
  - name: tuned by string
    harness: pi
    tool: read
    arguments: {path: /b/x}
    vars: {hidden: "/a,/b"}
    expect: match
  - name: unknown var
    harness: pi
    tool: read
    arguments: {path: /b/x}
    vars: {hiden: "/b"}
    expect: match
""",
    )
    write_cases(
        tmp_path,
        "copy-after-read",
        """cases:
  - name: after a read
    harness: pi
    tool: write
    arguments: {path: a.py, content: x}
    history:
      - {tool: read, arguments: {path: tests/t.py}, output: "42"}
    expect: match
  - {name: fresh session, harness: pi, tool: write, arguments: {path: a.py}, expect: ok}
""",
    )
    registry = FakeRegistry({"read-before": ReadBefore()})
    results = by_case(run_fixtures([tmp_path], checker=registry.firewall))
    assert results["default"].passed and results["tuned away"].passed
    assert results["tuned by string"].passed
    assert not results["unknown var"].passed
    assert "unknown var 'hiden'" in results["unknown var"].detail
    assert results["after a read"].passed and results["fresh session"].passed


def test_malformed_and_orphan_fixture_files(tmp_path: Path) -> None:
    write_rule(tmp_path, "r", {"effect": "delete"})
    fixture = write_cases(
        tmp_path,
        "r",
        "cases:\n  - {name: a, harness: pi, tool: bash, expect: maybe}\n"
        "  - {name: b, harness: pi, tool: bash, arguments: [1], expect: ok, qqqqq: 1}\n",
    )
    orphan = write_cases(tmp_path, "gone", "cases: []\n")
    with pytest.raises(RuleLoadError) as caught:
        run_fixtures([tmp_path], checker=FakeRegistry().firewall)
    assert [str(e) for e in caught.value.errors] == [
        f"{fixture}:2:48: cases[0].expect: expected one of match, ok, todo-match, todo-ok, "
        "got 'maybe'",
        f"{fixture}:3:68: unknown field 'qqqqq' "
        "(expected one of name, harness, tool, text, arguments, arguments_json, expect, cwd, "
        "vars, instruction, history, said_before)",
        f"{orphan}: fixture file without a rule (expected gone.yaml beside it)",
    ]


def test_unknown_detector_fails_the_run(tmp_path: Path) -> None:
    write_rule(tmp_path, "r", {"detector": "nope"})
    with pytest.raises(RuleLoadError, match="unknown detector 'nope'"):
        run_fixtures([tmp_path], checker=FakeRegistry().firewall)


def test_a_rule_without_fixtures_fails(tmp_path: Path) -> None:
    rule = write_rule(tmp_path, "r", {"effect": "delete"})
    [result] = run_fixtures([tmp_path], checker=FakeRegistry().firewall)
    assert (result.rule_id, result.case, result.passed) == ("r", "fixtures", False)
    assert result.detail == "no fixtures: write r.test.yaml beside the rule"
    assert result.source == str(rule)


CASE = "  - {{name: {name}, harness: {harness}, tool: bash, arguments: {{command: {command}}}, "
CASE += "expect: {expect}}}\n"


def test_min_cases_counts_match_and_ok_cases_and_harness_schemas(tmp_path: Path) -> None:
    write_rule(tmp_path, "r", {"effect": "delete"})
    cases = [
        ("rm a", "pi", "rm a", "match"),
        ("rm b", "opencode", "rm b", "match"),
        ("ls", "pi", "ls", "ok"),
        ("gap", "pi", "ls", "todo-match"),  # todo cases do not count
    ]
    fixture = write_cases(
        tmp_path,
        "r",
        "cases:\n"
        + "".join(CASE.format(name=n, harness=h, command=c, expect=e) for n, h, c, e in cases),
    )
    results = run_fixtures([tmp_path], checker=FakeRegistry().firewall, min_cases=2)
    [coverage] = [r for r in results if r.case == "coverage"]
    assert not coverage.passed and coverage.source == str(fixture)
    assert coverage.detail == (
        "1 'ok' case(s); each rule needs 2 of each (--min-cases relaxes this)"
    )
    results = run_fixtures([tmp_path], checker=FakeRegistry().firewall, min_cases=3)
    [coverage] = [r for r in results if r.case == "coverage"]
    assert coverage.detail.startswith(
        "2 'match' case(s), 1 'ok' case(s), 2 harness schema(s) (opencode, pi); each rule needs 3"
    )
    results = run_fixtures([tmp_path], checker=FakeRegistry().firewall, min_cases=1)
    assert all(r.passed for r in results) and "coverage" not in {r.case for r in results}


def test_harness_names_and_tools_are_checked_against_the_registry(tmp_path: Path) -> None:
    write_rule(tmp_path, "r", {"effect": "delete"})
    fixture = write_cases(
        tmp_path,
        "r",
        "cases:\n"
        "  - {name: typo, harness: pie, tool: bash, arguments: {command: rm a}, expect: match}\n"
        "  - {name: claude names, harness: pi, tool: Write, arguments: {file_path: a}, "
        "expect: ok}\n"
        "  - name: history too\n    harness: claude\n    tool: Bash\n"
        "    arguments: {command: rm a}\n    expect: match\n"
        "    history: [{tool: bash, arguments: {command: ls}}]\n"
        "  - {name: generic, harness: generic, tool: Write, arguments: {file_path: a}, "
        "expect: ok}\n"
        "  - {name: pi fields, harness: claude-code, tool: Bash, arguments: {cmd: rm a}, "
        "expect: ok}\n",
    )
    harness = default_registry().harness
    with pytest.raises(RuleLoadError) as caught:
        run_fixtures([tmp_path], checker=FakeRegistry().firewall, harness=harness)
    errors = [str(e) for e in caught.value.errors]
    assert errors[0].startswith(f"{fixture}:2:27: unknown harness 'pie'; known harnesses: ")
    assert errors[1].startswith(
        f"{fixture}:3:45: 'Write' is not a pi tool (pi's tools: bash, edit, find, grep, ls, "
        "read, write), so only the generic fallback would read it"
    )
    assert errors[2].startswith(f"{fixture}:9:22: 'bash' is not a claude-code tool")
    assert errors[3] == (
        f"{fixture}:11:51: claude-code's 'Bash' reads nothing from these arguments (cmd) where "
        "the generic fallback reads 'exec rm a': are they another harness's field names?"
    )
    assert len(errors) == 4


def test_case_arguments_must_be_a_mapping_or_text(tmp_path: Path) -> None:
    write_rule(tmp_path, "r", {"effect": "delete"})
    fixture = write_cases(
        tmp_path,
        "r",
        "cases:\n  - {name: a, harness: pi, tool: bash, arguments: [1], expect: ok}\n"
        "  - {name: b, harness: pi, tool: bash, arguments: 'rm x', expect: ok, vars: {v: 1}}\n",
    )
    with pytest.raises(RuleLoadError) as caught:
        run_fixtures([tmp_path], checker=FakeRegistry().firewall)
    assert [str(e) for e in caught.value.errors] == [
        f"{fixture}:2:51: arguments: expected a mapping or text, got a list",
        f"{fixture}:3:81: vars.v: expected text or a list of text, got int 1",
    ]
