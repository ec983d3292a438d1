"""Bundled packs plus the user's: ``--rules`` adds, ``--no-default-rules``, ``--exclude-rule``."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import safeagents.proxy
from safeagents.cli import main
from safeagents.exchange import ProxyConfig, build_firewall
from safeagents.rules import RuleSet, bundled_rules_path

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "sessions.jsonl"
MINE = (
    "id: runs-anything\ncategory: other\nseverity: low\naction: flag\ndescription: d\n"
    "message: m\nmatch:\n  effect: exec\n"
)


@pytest.fixture
def mine(tmp_path: Path) -> Path:
    (tmp_path / "runs-anything.yaml").write_text(MINE)
    return tmp_path


def rule_ids(argv: list[str], capsys: pytest.CaptureFixture[str]) -> set[str]:
    main(["check", "--format", "json", *argv, str(EXAMPLES)])
    sessions = json.loads(capsys.readouterr().out)["sessions"]
    return {finding["rule_id"] for s in sessions for finding in s["findings"]}


def test_rules_add_to_the_bundled_packs(mine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundled = rule_ids([], capsys)
    assert "test-file-deletion" in bundled and "runs-anything" not in bundled
    assert rule_ids(["--rules", str(mine)], capsys) == bundled | {"runs-anything"}
    assert rule_ids(["--no-default-rules", "--rules", str(mine)], capsys) == {"runs-anything"}
    excluded = rule_ids(["--rules", str(mine), "--exclude-rule", "test-file-deletion"], capsys)
    assert excluded == (bundled - {"test-file-deletion"}) | {"runs-anything"}


@pytest.mark.parametrize("command", ["check", "score"])
def test_an_unknown_excluded_id_or_no_rules_at_all_is_a_usage_error(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--exclude-rule", "test-weakning", str(EXAMPLES)]) == 2
    assert (
        "error: --exclude-rule: unknown rule 'test-weakning' (did you mean 'test-weakening'?)"
        in capsys.readouterr().err
    )
    assert main([command, "--no-default-rules", str(EXAMPLES)]) == 2
    assert "--no-default-rules needs --rules PATH" in capsys.readouterr().err


def test_test_runs_bundled_and_added_fixtures_less_the_excluded(
    mine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["test", "--rules", str(mine), "--exclude-rule", "disk-wipe"]) == 1
    out = capsys.readouterr().out
    assert "FAIL runs-anything :: fixtures" in out  # the added rule has none
    bundled = len(RuleSet.load().rules)
    assert "1 failed" in out and f"({bundled} rules)" in out  # the bundled, one out, one in
    assert main(["test", "--exclude-rule", "disk-wipe"]) == 0
    assert f"({bundled - 1} rules)" in capsys.readouterr().out


def test_serve_hands_its_workers_the_same_selection(
    mine: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    started: dict[str, Any] = {}

    def capture(config: ProxyConfig, **kwargs: Any) -> None:
        started.update(config=config, **kwargs)

    monkeypatch.setattr(safeagents.proxy, "serve", capture)
    argv = ["serve", "--upstream", "http://127.0.0.1:1/v1", "--rules", str(mine)]
    assert main([*argv, "--exclude-rule", "test-file-deletion"]) == 0
    config = ProxyConfig.from_json(started["config"].to_json())  # as a worker reads it
    assert config.rules == (str(bundled_rules_path()), str(mine))
    assert config.exclude_rules == ("test-file-deletion",)
    in_worker = {rule.id for rule in build_firewall(config).rules}
    in_parent = {rule.id for rule in started["firewall"].rules}
    assert in_worker == in_parent
    assert "runs-anything" in in_worker and "test-file-deletion" not in in_worker
    assert "reward-hacking" not in str(config.rules[1:])


def test_intercept_gets_the_same_selection(
    mine: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, Any] = {}
    fake = types.ModuleType("safeagents.intercept")
    fake.InterceptSettings = lambda **kwargs: kwargs  # type: ignore[attr-defined]
    fake.run_intercept = lambda settings, firewall: seen.update(  # type: ignore[attr-defined]
        settings=settings, firewall=firewall
    )
    monkeypatch.setitem(sys.modules, "safeagents.intercept", fake)
    argv = ["intercept", "--no-default-rules", "--rules", str(mine)]
    assert main([*argv, "--exclude-rule", "runs-anything"]) == 0
    assert seen["settings"]["rules"] == (str(mine),)
    assert seen["settings"]["exclude_rules"] == ("runs-anything",)
    assert len(seen["firewall"].rules) == 0
