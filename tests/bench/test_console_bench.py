"""The console benchmark runs end to end on a small store, and its baseline counts agree."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "console_bench.py"


def test_a_small_run_times_every_filter(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = runpy.run_path(str(BENCH))
    monkeypatch.setattr(sys, "argv", ["console_bench.py"])
    assert bench["main"](["--sessions", "3000", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    for name, _ in bench["FILTERS"]:
        assert any(line.startswith(name) for line in out.splitlines()), name
    assert "admin API list_sessions" in out
