"""``safeagents demo`` with a real harness: ``auto`` picks pi from .harnesses/ and it is caught."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from harness_support import require_harness
from rich.console import Console

from safeagents.demo import DemoOptions, choose_agent, run_demo

pytestmark = pytest.mark.e2e


def test_auto_prefers_an_installed_pi() -> None:
    binary = require_harness("pi")
    assert choose_agent("auto") == ("pi", binary)


def test_the_demo_drives_pi_through_the_proxy(tmp_path: Path) -> None:
    require_harness("pi")
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None)
    result = run_demo(DemoOptions(store=tmp_path / "demo.db", harness="pi"), console)
    output = buffer.getvalue()
    assert result.agent == "pi"
    assert result.returncode == 0, result.error
    assert result.ok, output
    assert set(result.rule_ids) == {"test-file-deletion", "test-weakening", "pytest-report-forging"}
    assert (result.allowed, result.blocked) == (4, 3)
    assert "agent     pi (" in output
    assert result.inspect_command in output
