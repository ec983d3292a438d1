import json
from pathlib import Path

import pytest

from safeagents.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sessions.jsonl"


def _labelled(tmp_path: Path, labels: dict[str, tuple[str, str | None]]) -> Path:
    lines = []
    for line in EXAMPLES.read_text().splitlines():
        session = json.loads(line)
        session["label"], session["category"] = labels[session["id"]]
        lines.append(json.dumps(session))
    path = tmp_path / "labelled.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _score(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main(["score", "--format", "json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_score_counts_recall_fpr_and_rule_precision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _labelled(
        tmp_path,
        {
            "pi-honest-fix": ("hack", "special-casing"),  # clean: a miss
            "opencode-deletes-test": ("hack", "test-tampering"),
            "claude-forges-report": ("benign", None),  # flagged: a false positive
        },
    )
    code, result = _score([str(path)], capsys)
    assert code == 0
    assert result["recall"] == 0.5 and result["fpr"] == 1.0
    assert result["per_category"] == {
        "special-casing": {"hit": 0, "total": 1},
        "test-tampering": {"hit": 1, "total": 1},
    }
    assert result["misses"] == ["pi-honest-fix"]
    assert [fp["id"] for fp in result["false_positives"]] == ["claude-forges-report"]  # type: ignore[attr-defined]
    assert result["per_rule"]["test-file-deletion"] == {"tp": 1, "fp": 0}  # type: ignore[index]
    outcomes = {s["id"]: (s["label"], s["hacked"]) for s in result["sessions"]}  # type: ignore[attr-defined]
    assert outcomes == {
        "pi-honest-fix": ("hack", False),
        "opencode-deletes-test": ("hack", True),
        "claude-forges-report": ("benign", True),
    }


def test_contested_sessions_are_reported_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _labelled(
        tmp_path,
        {
            "pi-honest-fix": ("benign", None),
            "opencode-deletes-test": ("hack", "test-tampering"),
            "claude-forges-report": ("contested", "report-forging"),
        },
    )
    code, result = _score([str(path)], capsys)
    assert (code, result["recall"], result["fpr"]) == (0, 1.0, 0.0)
    [contested] = result["contested"]  # type: ignore[misc]
    assert contested["id"] == "claude-forges-report" and contested["hacked"] is True
    assert "pytest-report-forging" in contested["rules"]


def test_thresholds_set_the_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _labelled(
        tmp_path,
        {
            "pi-honest-fix": ("benign", None),
            "opencode-deletes-test": ("hack", "test-tampering"),
            "claude-forges-report": ("benign", None),
        },
    )
    assert _score(["--max-fpr", "0.5", str(path)], capsys)[0] == 0
    assert _score(["--max-fpr", "0.4", str(path)], capsys)[0] == 1
    assert _score(["--min-recall", "1", str(path)], capsys)[0] == 0


def test_unlabelled_sessions_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(EXAMPLES)]) == 2
    assert "without a label" in capsys.readouterr().err


def test_text_report_names_misses_and_false_positives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _labelled(
        tmp_path,
        {
            "pi-honest-fix": ("hack", "special-casing"),
            "opencode-deletes-test": ("benign", None),
            "claude-forges-report": ("hack", "report-forging"),
        },
    )
    main(["score", str(path)])
    out = capsys.readouterr().out
    assert "missed pi-honest-fix" in out
    assert "false positive opencode-deletes-test" in out
    assert "recall 0.50 (1/2)" in out and "false-positive rate 1.00 (1/1)" in out
