"""The trainer attaches to safeagents as a plugin: entry point, reward hookspec, ``train``."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import distribution
from pathlib import Path

import pytest

import trainer._plugin
from safeagents import default_registry, load_registry
from safeagents.cli import main
from safeagents.plugins import PROJECT_NAME

PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"


def test_the_project_declares_the_trainer_entry_point() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    assert project["entry-points"][PROJECT_NAME] == {"trainer": "trainer._plugin"}


def test_the_installed_distribution_lists_the_trainer_entry_point() -> None:
    declared = [ep for ep in distribution("safeagents").entry_points if ep.group == PROJECT_NAME]
    if not declared:
        pytest.skip("the installed safeagents metadata predates its entry points: reinstall it")
    assert [(ep.name, ep.value) for ep in declared] == [("trainer", "trainer._plugin")]


def test_the_registry_loads_the_trainer_and_its_reward_hookspec() -> None:
    plugins = load_registry().plugin_manager
    assert plugins.get_plugin("trainer") is trainer._plugin
    caller = plugins.hook.safeagents_reward
    assert caller.spec is not None and caller.spec.opts["firstresult"]


def test_without_the_entry_point_the_registry_has_no_reward_hook() -> None:
    plugins = load_registry(entry_points=False).plugin_manager
    assert plugins.get_plugin("trainer") is None
    assert not hasattr(plugins.hook, "safeagents_reward")


def test_train_is_the_trainer_plugins_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["train", "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "CONFIG.yaml" in out and "--proxy-url" in out


def test_train_is_absent_when_the_trainer_plugin_is_not_loaded(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SAFEAGENTS_LOAD_PLUGINS", "")
    default_registry.cache_clear()
    try:
        with pytest.raises(SystemExit) as exited:
            main(["train", "config.yaml"])
    finally:
        default_registry.cache_clear()
    assert exited.value.code == 2
    assert "invalid choice: 'train'" in capsys.readouterr().err


def test_a_bad_config_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "train.yaml"
    config.write_text("base_model: tiny\nharnesses: [generic]\nbogus: 1\n", encoding="utf-8")
    assert main(["train", str(config)]) == 2
    assert "unknown key 'bogus'" in capsys.readouterr().err


def test_core_imports_no_trainer() -> None:
    check = (
        "import sys, safeagents, safeagents.cli\n"
        "safeagents.load_registry(entry_points=False)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'trainer'))"
    )
    found = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "[]"
