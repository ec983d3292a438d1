"""Shared plugin helpers: argument decoding, argv unwrapping and detection scores."""

from __future__ import annotations

from typing import Any

import pytest

from harness_plugins._common import ToolArgs, argv_effects, network
from harness_plugins.mini_swe_agent import MiniSweAgentHarness
from harness_plugins.pi import PiHarness
from safeagents._actions import AnalysisContext

CTX = AnalysisContext(cwd="/workspace")


@pytest.mark.parametrize(
    ("arguments", "mapping", "text"),
    [
        ({"a": 1}, {"a": 1}, None),
        ('{"a": 1}', {"a": 1}, None),
        ('"quoted"', {}, "quoted"),
        ("raw text", {}, "raw text"),
        ("[1, 2]", {}, "[1, 2]"),
        ("   ", {}, None),
        (42, {}, None),
    ],
)
def test_tool_args_decoding(arguments: Any, mapping: dict[str, Any], text: str | None) -> None:
    args = ToolArgs.of(arguments)
    assert (dict(args.mapping), args.text) == (mapping, text)


def test_tool_args_accessors() -> None:
    args = ToolArgs.of({"a": None, "b": 3, "c": "s", "flag": "true", "edits": '[{"x": 1}]'})
    assert args.value("a", "b") == 3
    assert args.string("b", "c") == "s"
    assert args.flag("flag") and not args.flag("b")
    assert args.items("edits") == [{"x": 1}]
    assert args.items("c") == []


def test_context_follows_workdir() -> None:
    assert ToolArgs.of({"workdir": "sub"}).context(CTX).cwd == "/workspace/sub"
    assert ToolArgs.of({"working_directory": "/x"}).context(CTX).cwd == "/x"
    assert ToolArgs.of({"workdir": 3}).context(CTX) is CTX


def test_argv_apply_patch_and_empty() -> None:
    patch = "*** Begin Patch\n*** Delete File: a.py\n*** End Patch"
    assert [(e.kind, e.path) for e in argv_effects(["applypatch", patch], CTX)] == [
        ("delete", "/workspace/a.py")
    ]
    assert argv_effects([], CTX) == []


def test_network_host() -> None:
    assert network("https://user@Example.com:8080/x").host == "example.com"
    assert network("example.org/path").host == "example.org"


def test_detect_scores_are_fractions() -> None:
    for harness in (PiHarness(), MiniSweAgentHarness()):
        for tools in (["bash"], ["read", "bash", "edit", "write"], ["zzz"], []):
            assert 0.0 <= harness.detect(tools) <= 1.0
    assert MiniSweAgentHarness().detect(["bash"]) == 1.0
    assert PiHarness().detect(["bash"]) < 1.0
