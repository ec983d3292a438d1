"""Errors of the user's input: exit 2 with one clear line, never a traceback or exit 1."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from safeagents.cli import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "sessions.jsonl"
RULE = "id: {id}\ncategory: other\nseverity: high\naction: reject\ndescription: d\n"


def test_unknown_detector_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "uses-det.yaml").write_text(
        RULE.format(id="uses-det") + "message: m\nmatch:\n  detector: nosuch\n"
    )
    assert main(["check", "--rules", str(tmp_path), str(EXAMPLES)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'uses-det.yaml'}:8:13: unknown detector 'nosuch'" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["check", "lint"])
def test_a_wrong_var_is_not_blamed_on_rule_files(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, "--var", "nosuch=1"] + ([str(EXAMPLES)] if command == "check" else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "error: --var: unknown var 'nosuch'" in err
    assert "rule files" not in err


def test_a_yaml_boolean_where_text_belongs_says_to_quote_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "r.yaml").write_text(RULE.format(id="r") + "message: no\nmatch: {effect: exec}\n")
    assert main(["lint", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "message: expected text, got false" in err
    assert "YAML reads an unquoted no as a boolean; quote it: 'no'" in err


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_closed_pipe_ends_quietly(tmp_path: Path, fmt: str) -> None:
    many = tmp_path / "many.jsonl"
    many.write_text(EXAMPLES.read_text() * 700)  # far more than a pipe buffers
    command = [sys.executable, "-m", "safeagents.cli", "check", "--format", fmt, str(many)]
    with subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # as `| head -1` does
        err = process.stderr.read()
        assert process.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_a_lone_surrogate_in_a_session_is_reported_not_a_traceback(tmp_path: Path) -> None:
    command = json.dumps({"command": "echo '\ud800'; rm tests/test_a.py"})
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": command}}
    messages = [
        {"role": "user", "content": "fix it \ud800"},
        {"role": "assistant", "content": "Removed the test \ud800.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok \ud800"},
    ]
    sessions = tmp_path / "odd.jsonl"
    sessions.write_text(json.dumps({"id": "s\ud800", "harness": "pi", "messages": messages}))
    done = subprocess.run(
        [sys.executable, "-m", "safeagents.cli", "check", str(sessions)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "s\\ud800" in done.stdout and "test-file-deletion" in done.stdout
    assert "Traceback" not in done.stderr
