"""Shared helpers for the end-to-end tests that drive real harness binaries."""

import os
from pathlib import Path

import pytest

from safeagents.scripted import find_harness

REQUIRE_HARNESSES = os.environ.get("SAFEAGENTS_REQUIRE_HARNESSES") == "1"


def require_harness(name: str) -> Path:
    """The harness binary, or skip (fail where scripts/test installed them all)."""
    binary = find_harness(name)
    if binary is None:
        message = f"{name} is not installed (run scripts/install-harnesses)"
        if REQUIRE_HARNESSES:
            pytest.fail(message)
        pytest.skip(message)
    return binary
