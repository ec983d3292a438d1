"""The detection benchmark: the split is stable, and part figures sum from one scoring."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bench.detection.run import BATTERY, BATTERY_TARGETS, parts_of, report, tally
from bench.detection.split import corpus_lines, split


def _line(session_id: str, label: str) -> str:
    return json.dumps({"id": session_id, "label": label, "messages": []})


def test_every_fourth_session_of_each_label_is_set_aside() -> None:
    hacks = [_line(f"h{i}", "hack") for i in range(8)]
    lines = hacks + [_line(f"b{i}", "benign") for i in range(8)]
    parts = split([*reversed(lines), ""])
    assert len(parts["validate"]) == 4 and len(parts["tune"]) == 12
    again = split(lines)  # the order of the lines does not matter
    assert {name: set(part) for name, part in again.items()} == {
        name: set(part) for name, part in parts.items()
    }


def test_tally_sums_outcomes_like_the_scorer() -> None:
    sessions = [
        {"id": "a", "label": "hack", "hacked": True, "rules": ["r1"]},
        {"id": "b", "label": "hack", "hacked": False, "rules": []},
        {"id": "c", "label": "benign", "hacked": True, "rules": ["r1", "r2"]},
        {"id": "d", "label": "contested", "hacked": True, "rules": ["r2"]},
    ]
    result = tally(sessions)
    assert (result["caught"], result["hacks"], result["flagged"], result["benign"]) == (1, 2, 1, 1)
    assert result["per_rule"] == {"r1": {"tp": 1, "fp": 1}, "r2": {"tp": 0, "fp": 1}}


def test_parts_must_add_up_to_the_whole(tmp_path: Path) -> None:
    lines = [_line(f"h{i}", "hack") for i in range(4)]
    (tmp_path / "c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    sessions = [{"id": f"h{i}", "label": "hack", "hacked": True, "rules": []} for i in range(4)]
    whole = {**tally(sessions), "sessions": sessions}
    parts = parts_of(tmp_path, whole)
    assert parts["tune"]["hacks"] == 3 and parts["validate"]["hacks"] == 1
    with pytest.raises(SystemExit):
        parts_of(tmp_path, {**whole, "caught": 3})


def test_report_fails_a_part_below_its_target(capsys: pytest.CaptureFixture[str]) -> None:
    sessions = [
        {"id": "a", "label": "hack", "hacked": True, "rules": ["r1"]},
        {"id": "b", "label": "hack", "hacked": False, "rules": []},
        {"id": "c", "label": "benign", "hacked": False, "rules": []},
    ]
    part = {**tally(sessions), "per_category": {"special-casing": {"hit": 1, "total": 2}}}
    parts = {"all": part, "tune": part, "validate": part}
    assert report("t", parts, {"all": (0.5, 0.0), "tune": (0.5, 0.0), "validate": (0.5, 0.0)})
    assert not report("t", parts, {"all": (0.5, 0.0), "tune": (0.6, 0.0), "validate": (0.5, 0.0)})
    assert "FAILED" in capsys.readouterr().out


def test_every_battery_round_is_labelled_and_has_targets() -> None:
    rounds = sorted(path for path in BATTERY.iterdir() if path.is_dir())
    assert [path.name for path in rounds] == sorted(BATTERY_TARGETS)
    for folder in rounds:
        lines = corpus_lines(folder)
        labels = [json.loads(line)["label"] for line in lines]
        hacks, benign = labels.count("hack"), labels.count("benign")
        assert hacks >= 12 and benign >= 12 and hacks + benign == len(labels), folder
        validate = [json.loads(line)["label"] for line in split(lines)["validate"]]
        assert validate.count("hack") == -(-hacks // 4), folder  # one in four of each label
        assert validate.count("benign") == -(-benign // 4), folder
