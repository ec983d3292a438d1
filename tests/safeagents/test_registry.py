"""The plugin registry: built-ins, entry-point plugins, conflicts, fallbacks and failures."""

from __future__ import annotations

import logging
import sys
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import CallContext, Detector
from safeagents._harness import Harness
from safeagents._registry import (
    DEFAULT_PLUGINS,
    ENV_LOAD_PLUGINS,
    PluginError,
    Registry,
    UnknownHarnessError,
    default_registry,
    load_registry,
)
from safeagents.plugins import hookimpl

CTX = AnalysisContext(cwd="/workspace")
BUILTIN_HARNESSES = {
    "pi",
    "opencode",
    "hermes",
    "claude-code",
    "codex",
    "mini-swe-agent",
    "swe-agent",
    "generic",
}

PLUGIN_SOURCE = """
from safeagents._actions import Effect
from safeagents._harness import Harness
from safeagents.plugins import hookimpl


class AcmeHarness(Harness):
    name = "acme"
    aliases = frozenset({"acme-agent"})
    tools = frozenset({"acme_run", "acme_note"})

    def effects(self, call, ctx):
        if call.name != "acme_run":
            return None
        return [Effect("delete", path=ctx.resolve(str(call.argument("target"))))]


@hookimpl
def safeagents_harnesses():
    return [AcmeHarness()]
"""


@pytest.fixture
def acme_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An installed distribution exposing a harness module under group ``safeagents``."""
    module = "acme_safeagents_harness"
    (tmp_path / f"{module}.py").write_text(PLUGIN_SOURCE)
    dist_info = tmp_path / "acme_safeagents_harness-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: acme-safeagents-harness\nVersion: 1.0\n"
    )
    (dist_info / "entry_points.txt").write_text(f"[safeagents]\nacme = {module}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(ENV_LOAD_PLUGINS, raising=False)
    yield "acme"
    sys.modules.pop(module, None)


class _Raising(Harness):
    name = "raising"
    tools = frozenset({"boom"})

    def effects(self, call: ToolCall, ctx: AnalysisContext) -> list[Effect] | None:
        raise RuntimeError("plugin bug")


class _Garbage(Harness):
    name = "garbage"

    def effects(self, call: ToolCall, ctx: AnalysisContext) -> list[Effect] | None:
        return ["not an effect"]  # type: ignore[list-item]


class _Provides:
    """A plugin object returning fixed harnesses and detectors."""

    def __init__(
        self, harnesses: list[Any] | None = None, detectors: list[Any] | None = None
    ) -> None:
        self.harnesses = harnesses or []
        self.detectors = detectors or []

    @hookimpl
    def safeagents_harnesses(self) -> list[Any]:
        return self.harnesses

    @hookimpl
    def safeagents_detectors(self) -> list[Any]:
        return self.detectors


class _AlwaysDetector(Detector):
    name = "always-registry-test"
    description = "matches everything"

    def matches(self, effect: Effect, context: CallContext) -> bool:
        return True


def _named_harness(harness_name: str, harness_tools: Collection[str], alias: str = "") -> Harness:
    class Named(Harness):
        name: ClassVar[str] = harness_name
        aliases: ClassVar[frozenset[str]] = frozenset({alias} if alias else ())
        tools: ClassVar[frozenset[str]] = frozenset(harness_tools)

        def effects(self, call: ToolCall, ctx: AnalysisContext) -> list[Effect] | None:
            return [Effect("read", path=f"/{harness_name}")]

    return Named()


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry(entry_points=False)


def test_builtins_are_registered_as_plugins(registry: Registry) -> None:
    assert set(registry.harnesses) >= BUILTIN_HARNESSES
    for module in DEFAULT_PLUGINS:
        assert registry.plugin_manager.has_plugin(module)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("claude", "claude-code"),
        ("Claude-Code", "claude-code"),
        ("hermes-agent", "hermes"),
        ("mini", "mini-swe-agent"),
        ("openhands", "swe-agent"),
        (" pi ", "pi"),
        ("generic", "generic"),
    ],
)
def test_harness_names_and_aliases(registry: Registry, name: str, expected: str) -> None:
    assert registry.harness(name).name == expected


def test_unknown_harness_lists_known_names(registry: Registry) -> None:
    with pytest.raises(UnknownHarnessError) as info:
        registry.harness("aider")
    assert isinstance(info.value, ValueError)
    for name in BUILTIN_HARNESSES:
        assert name in str(info.value)


def test_mappings_are_read_only(registry: Registry) -> None:
    with pytest.raises(TypeError):
        registry.harnesses["x"] = registry.harness("pi")  # type: ignore[index]


def test_effects_by_name_instance_and_none(registry: Registry) -> None:
    call = ToolCall("c", "Read", {"file_path": "a.py"})
    expected = [Effect("read", path="/workspace/a.py")]
    assert registry.effects(call, "claude-code", CTX) == expected
    assert registry.effects(call, registry.harness("claude"), CTX) == expected
    assert (
        registry.effects(ToolCall("c", "x", {"file_path": "a.py", "content": "y"}), None, CTX)[
            0
        ].kind
        == "write"
    )


def test_unknown_tool_falls_back_to_generic(registry: Registry) -> None:
    call = ToolCall("c", "mcp__fs__write_file", {"path": "tests/t.py", "content": "x"})
    found = registry.effects(call, "claude-code", CTX)
    assert [(e.kind, e.path) for e in found] == [("write", "/workspace/tests/t.py")]


def test_unknown_harness_name_in_effects_uses_generic(
    registry: Registry, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="safeagents._registry"):
        found = registry.effects(ToolCall("c", "Read", {"file_path": "a.py"}), "aider", CTX)
    assert found == [Effect("read", path="/workspace/a.py")]  # generic: read-ish name + path
    assert "aider" in caplog.text


def test_raising_plugin_gives_an_opaque_exec(caplog: pytest.LogCaptureFixture) -> None:
    registry = load_registry(entry_points=False, plugins=[_Provides([_Raising(), _Garbage()])])
    call = ToolCall("c", "boom", {"script": "x" * 5000})
    with caplog.at_level(logging.WARNING, logger="safeagents._registry"):
        found = registry.effects(call, "raising", CTX)
    assert [(e.kind, e.opaque) for e in found] == [("exec", True)]
    assert (found[0].command or "").startswith('{"script": "xxx')
    assert len(found[0].command or "") <= 2000
    assert "raising" in caplog.text and "plugin bug" in caplog.text
    garbage = registry.effects(ToolCall("c", "t", "raw text"), "garbage", CTX)
    assert [(e.kind, e.command, e.opaque) for e in garbage] == [("exec", "raw text", True)]


def test_third_party_entry_point_plugin(acme_distribution: str) -> None:
    registry = load_registry()
    harness = registry.harness(acme_distribution)
    assert registry.harness("acme-agent") is harness
    assert registry.plugin_manager.has_plugin("acme")
    found = registry.effects(ToolCall("c", "acme_run", {"target": "tests/t.py"}), "acme", CTX)
    assert found == [Effect("delete", path="/workspace/tests/t.py")]
    fallback = registry.effects(ToolCall("c", "other", {"command": "ls"}), "acme", CTX)
    assert fallback == registry.effects(ToolCall("c", "other", {"command": "ls"}), None, CTX)
    assert registry.detect(["acme_run", "acme_note"]).name == "acme"


@pytest.mark.parametrize(
    ("allowed", "loaded"), [("", False), ("acme", True), ("other, acme", True), ("other", False)]
)
def test_load_plugins_env_restricts_entry_points(
    acme_distribution: str, monkeypatch: pytest.MonkeyPatch, allowed: str, loaded: bool
) -> None:
    monkeypatch.setenv(ENV_LOAD_PLUGINS, allowed)
    assert ("acme" in load_registry().harnesses) is loaded


def test_entry_points_can_be_skipped(acme_distribution: str) -> None:
    assert "acme" not in load_registry(entry_points=False).harnesses


@pytest.mark.parametrize(
    ("name", "alias", "clash"), [("pi", "", "pi"), ("newbie", "claude", "claude")]
)
def test_duplicate_names_name_both_plugins(name: str, alias: str, clash: str) -> None:
    with pytest.raises(PluginError) as info:
        load_registry(entry_points=False, plugins=[_Provides([_named_harness(name, [], alias)])])
    message = str(info.value)
    assert repr(clash) in message
    assert "harness_plugins." in message  # the built-in that owns it
    assert "_Provides" in message or "plugin" in message


def test_plugin_returning_non_harness_is_rejected() -> None:
    with pytest.raises(PluginError, match="expected Harness"):
        load_registry(entry_points=False, plugins=[_Provides(["pi"])])


def test_detectors_are_collected_and_checked_for_duplicates() -> None:
    registry = load_registry(entry_points=False, plugins=[_Provides(detectors=[_AlwaysDetector()])])
    assert isinstance(registry.detectors["always-registry-test"], _AlwaysDetector)
    with pytest.raises(PluginError, match="always-registry-test"):
        load_registry(
            entry_points=False,
            plugins=[
                _Provides(detectors=[_AlwaysDetector()]),
                _Provides(detectors=[_AlwaysDetector()]),
            ],
        )


def test_detect_ties_are_broken_by_name() -> None:
    plugins = [
        _Provides([_named_harness("zeta", ["t1", "t2"]), _named_harness("alpha", ["t1", "t2"])])
    ]
    registry = load_registry(entry_points=False, plugins=plugins)
    assert registry.detect(["t1", "t2"]).name == "alpha"


class _CountingHarness(Harness):
    name = "counting"
    tools = frozenset({"c1", "c2"})
    calls = 0

    def effects(self, call: ToolCall, ctx: AnalysisContext) -> list[Effect] | None:
        return []

    def detect(self, tool_names: Collection[str]) -> float:
        type(self).calls += 1
        return super().detect(tool_names)


def test_detect_scores_each_tool_set_once() -> None:
    registry = load_registry(entry_points=False, plugins=[_Provides([_CountingHarness()])])
    assert registry.detect(["c1", "c2"]).name == "counting"
    assert registry.detect(["c2", "c1", "c2"]).name == "counting"
    assert _CountingHarness.calls == 1
    assert registry.detect(["bash"]).name != "counting"
    assert _CountingHarness.calls == 2


def test_default_registry_is_cached() -> None:
    assert default_registry() is default_registry()
    assert set(default_registry().harnesses) >= BUILTIN_HARNESSES


class _Wrapper:
    @hookimpl(wrapper=True)
    def safeagents_harnesses(self) -> Iterator[None]:
        return (yield)


def test_hook_wrappers_are_ignored_when_collecting() -> None:
    registry = load_registry(entry_points=False, plugins=[_Wrapper()])
    assert set(registry.harnesses) >= BUILTIN_HARNESSES


def test_unknown_harness_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    registry = load_registry(entry_points=False)
    with caplog.at_level(logging.WARNING, logger="safeagents._registry"):
        for _ in range(3):
            registry.effects(ToolCall("c", "x", {}), "nope", CTX)
    assert caplog.text.count("'nope'") == 1
