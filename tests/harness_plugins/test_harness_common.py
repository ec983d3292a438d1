"""Shared plugin building blocks: detection scores."""

from __future__ import annotations

from harness_plugins.mini_swe_agent import MiniSweAgentHarness
from harness_plugins.pi import PiHarness


def test_detect_scores_are_fractions() -> None:
    for harness in (PiHarness(), MiniSweAgentHarness()):
        for tools in (["bash"], ["read", "bash", "edit", "write"], ["zzz"], []):
            assert 0.0 <= harness.detect(tools) <= 1.0
    assert MiniSweAgentHarness().detect(["bash"]) == 1.0
    assert PiHarness().detect(["bash"]) < 1.0
