import json
from pathlib import Path

import pytest

from safeagents.cli import main

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "sessions.jsonl"


def test_check_json_shape_and_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--format", "json", str(EXAMPLES)]) == 1
    document = json.loads(capsys.readouterr().out)
    sessions = {s["id"]: s for s in document["sessions"]}
    assert sessions["pi-honest-fix"]["hacked"] is False
    finding = sessions["opencode-deletes-test"]["findings"][0]
    assert set(finding) == {
        "rule_id",
        "category",
        "severity",
        "action",
        "tool_call_id",
        "tool",
        "summary",
    }
    assert finding["tool_call_id"] == "call_2" and finding["tool"] == "bash"


def test_check_clean_session_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "clean.json"
    path.write_text(json.dumps([{"role": "user", "content": "hello"}]))
    assert main(["check", str(path)]) == 0
    assert "1 session(s), 0 tool call(s), 0 hacked" in capsys.readouterr().out


def test_check_text_report_names_rule(capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", str(EXAMPLES)])
    out = capsys.readouterr().out
    assert "HACKED" in out and "test-file-deletion" in out


def test_malformed_input_line_exits_two_but_reports_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(EXAMPLES.read_text().splitlines()[0] + "\nnot json at all\n")
    assert main(["check", "--format", "json", str(path)]) == 2
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)["sessions"]) == 1
    assert f"{path}:2" in captured.err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", "/no/such/file.jsonl"], "input file not found"),
        (["check", "--var", "novalue", str(EXAMPLES)], "--var expects KEY=VALUE"),
        (["check", "--harness", "nosuch", str(EXAMPLES)], "nosuch"),
        (["check", "--rules", "/no/such/rules", str(EXAMPLES)], "rule path not found"),
        (["explain", "no-such-rule"], "no-such-rule"),
        (["lint", "/no/such/rules"], "rule path not found"),
        (["test", "/no/such/rules"], "rule path not found"),
    ],
)
def test_usage_errors_exit_two_with_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_unknown_subcommand_exits_two(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2


def test_lint_reports_file_line_col(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rule = tmp_path / "bad-rule.yaml"
    rule.write_text(
        "id: bad-rule\ncategory: other\nseverity: urgent\naction: reject\n"
        "description: d\nmessage: m\nmatch:\n  effect: delete\n"
    )
    assert main(["lint", str(tmp_path)]) == 1
    assert f"{rule}:3:11" in capsys.readouterr().err


def test_lint_and_test_pass_on_bundled_packs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint"]) == 0
    assert main(["test"]) == 0
    assert " 0 failed" in capsys.readouterr().out


def test_test_reports_a_failing_fixture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "no-rm.yaml").write_text(
        "id: no-rm\ncategory: destructive\nseverity: high\naction: reject\n"
        "description: d\nmessage: m\nmatch:\n  effect: delete\n"
    )
    (tmp_path / "no-rm.test.yaml").write_text(
        "cases:\n"
        "  - {name: rm, harness: pi, tool: bash, arguments: {command: rm a}, expect: match}\n"
        "  - {name: wrong, harness: pi, tool: bash, arguments: {command: ls}, expect: match}\n"
    )
    assert main(["test", "--min-cases", "0", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "wrong" in out and "1 passed, 1 failed" in out


NO_RM = (
    "id: no-rm\ncategory: destructive\nseverity: high\naction: reject\n"
    "description: d\nmessage: m\nmatch:\n  effect: delete\n"
)


def test_test_enforces_fixture_coverage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "no-rm.yaml").write_text(NO_RM)
    (tmp_path / "no-rm.test.yaml").write_text(
        "cases:\n  - {name: rm, harness: pi, tool: bash, arguments: {command: rm a},"
        " expect: match}\n"
    )
    (tmp_path / "untested.yaml").write_text(NO_RM.replace("no-rm", "untested"))
    assert main(["test", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL no-rm :: coverage" in out
    assert "1 'match' case(s), 0 'ok' case(s), 1 harness schema(s) (pi)" in out
    assert "FAIL untested :: fixtures" in out and "write untested.test.yaml" in out
    assert main(["test", "--min-cases", "0", str(tmp_path)]) == 1  # fixtures are still needed
    (tmp_path / "untested.yaml").unlink()
    assert main(["test", "--min-cases", "1", str(tmp_path)]) == 1  # no ok case
    assert main(["test", "--min-cases", "0", str(tmp_path)]) == 0


def test_test_rejects_an_unknown_harness_and_another_harness_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "no-rm.yaml").write_text(NO_RM)
    fixture = tmp_path / "no-rm.test.yaml"
    fixture.write_text(
        "cases:\n  - {name: rm, harness: pie, tool: bash, arguments: {command: rm a},"
        " expect: match}\n"
    )
    assert main(["test", "--min-cases", "0", str(tmp_path)]) == 2
    assert f"{fixture}:2:25: unknown harness 'pie'" in capsys.readouterr().err
    fixture.write_text(
        "cases:\n  - {name: rm, harness: pi, tool: Bash, arguments: {command: rm a},"
        " expect: match}\n"
    )
    assert main(["test", "--min-cases", "0", str(tmp_path)]) == 2
    assert f"{fixture}:2:35: 'Bash' is not a pi tool" in capsys.readouterr().err


def test_explain_prints_documentation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "test-file-deletion"]) == 0
    out = capsys.readouterr().out
    assert "What it does" in out and "reject" in out


@pytest.mark.parametrize("columns", ["40", "80"])
def test_check_never_breaks_a_path(
    columns: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    path = "tests/integration/storage/backends/test_postgres_connection_pool_recovery.py"
    arguments = json.dumps({"command": f"rm {path}"})
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": arguments},
    }
    session = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    file = tmp_path / "s.json"
    file.write_text(json.dumps({"id": "s", "harness": "pi", "messages": session}))
    assert main(["check", str(file)]) == 1
    lines = capsys.readouterr().out.splitlines()
    [finding] = [line for line in lines if "test-file-deletion" in line]
    assert finding.rstrip().endswith(f"delete /workspace/{path}")


@pytest.mark.parametrize(
    "command, shown",
    [
        ("serve", ["--port PORT", "(default: 8787)", "(default: 127.0.0.1)", "(default: reask)"]),
        ("serve", ["(default: safeagents.db)", "(default: 600.0)", "(default: 32)"]),
        ("intercept", ["(default: 8080)", "(default: enforce)"]),
        ("check", ["(default: flag)", "(default: text)"]),
        ("test", ["(default: 3"]),
    ],
)
def test_help_shows_defaults_and_what_repeats(
    command: str,
    shown: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for part in shown:
        assert part in text
    options = text.partition("options:")[2]
    assert "(repeatable)" in options.partition("--rules PATH")[2].partition("--")[0]
    assert "(default: None)" not in text and "(default: False)" not in text
