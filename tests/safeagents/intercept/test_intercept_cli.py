"""``safeagents intercept`` start-up checks that need no mitmproxy."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from safeagents.cli import main


@pytest.fixture
def without_mitmproxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import mitmproxy`` fail, as where the ``intercept`` extra is not installed."""
    for name in list(sys.modules):
        if name.split(".")[0] == "mitmproxy" or name.startswith("safeagents.intercept"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mitmproxy", None)


@pytest.mark.usefixtures("without_mitmproxy")
def test_intercept_without_mitmproxy_says_how_to_install_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["intercept", "--listen-port", "1"]) == 2
    assert "pip install 'safeagents[intercept]'" in capsys.readouterr().err


@pytest.mark.usefixtures("without_mitmproxy")
def test_intercept_reports_rule_errors_with_positions_before_anything_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rule = tmp_path / "broken-rule.yaml"
    rule.write_text("id: broken-rule\ncategory: other\nseverity: high\naction: explode\n")
    assert main(["intercept", "--rules", str(rule)]) == 2
    unwrapped = capsys.readouterr().err.replace("\n", "")
    assert re.search(rf"{re.escape(str(rule))}:\d+:\d+: action", unwrapped)
    assert "safeagents[intercept]" not in unwrapped


def test_intercept_rejects_bad_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["intercept", "--max-reasks", "-1"]) == 2
    assert main(["intercept", "--var", "novalue"]) == 2
    with pytest.raises(SystemExit) as exited:
        main(["intercept", "--mode", "block"])
    assert exited.value.code == 2
