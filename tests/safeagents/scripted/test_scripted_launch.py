import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from safeagents.scripted import (
    HARNESSES,
    HarnessLaunch,
    find_harness,
    prepare_launch,
    run_harness,
)

BASE = "http://127.0.0.1:9999/s/run-1/v1"


@pytest.fixture
def fake_binary(tmp_path: Path) -> Path:
    """A stand-in harness: prints its arguments and a few environment variables."""
    script = tmp_path / "bin" / "fake-harness"
    script.parent.mkdir()
    script.write_text(
        "#!/bin/sh\n"
        'echo "args:$*"\n'
        'echo "home:$HOME"\n'
        'echo "pwd:$(pwd)"\n'
        'echo "secret:${OPENAI_API_KEY_FROM_USER:-unset}"\n'
        'echo "to stderr" >&2\n'
        'if [ "$1" = sleep ]; then sleep 30; fi\n'
        "exit 3\n"
    )
    script.chmod(0o755)
    return script


def launch(harness: str, tmp_path: Path, binary: Path, prompt: str = "do it") -> HarnessLaunch:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return prepare_launch(
        harness, BASE, "org/model-1", workspace, prompt, tmp_path / "state", binary=binary
    )


def test_every_recipe_isolates_home_and_drops_user_secrets(
    tmp_path: Path, fake_binary: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY_FROM_USER", "sk-real")
    for harness in HARNESSES:
        prepared = launch(harness, tmp_path, fake_binary)
        assert prepared.argv[0] == str(fake_binary)
        assert prepared.env["HOME"].startswith(str(tmp_path / "state"))
        assert prepared.env["XDG_CONFIG_HOME"].startswith(prepared.env["HOME"])
        assert "sk-real" not in prepared.env.values()
        assert prepared.env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
        assert all(path.is_file() for path in prepared.config_files)
        profile = Path(prepared.env["HOME"]) / ".profile"
        assert profile in prepared.config_files
        login_path = subprocess.run(
            ["bash", "-lc", "echo $PATH"], env=prepared.env, capture_output=True, text=True
        ).stdout.strip()
        assert login_path == prepared.env["PATH"]  # login shells keep our interpreter first
        assert prepared.cwd == (tmp_path / "ws").resolve()


def test_opencode_config(tmp_path: Path, fake_binary: Path) -> None:
    prepared = launch("opencode", tmp_path, fake_binary)
    path = prepared.config_files[0]
    config = json.loads(path.read_text())
    assert prepared.env["OPENCODE_CONFIG"] == str(path)
    provider = config["provider"]["scripted"]
    assert provider["npm"] == "@ai-sdk/openai-compatible"
    assert provider["options"]["baseURL"] == BASE
    assert "org/model-1" in provider["models"]
    assert prepared.argv[1:] == ["run", "--model", "scripted/org/model-1", "do it"]


def test_pi_models_json(tmp_path: Path, fake_binary: Path) -> None:
    prepared = launch("pi", tmp_path, fake_binary)
    path = prepared.config_files[0]
    assert path.parent == Path(prepared.env["PI_CODING_AGENT_DIR"])
    provider = json.loads(path.read_text())["providers"]["scripted"]
    assert (provider["baseUrl"], provider["api"]) == (BASE, "openai-completions")
    assert provider["models"][0]["id"] == "org/model-1"
    assert prepared.argv[1:] == ["--provider", "scripted", "--model", "org/model-1", "-p", "do it"]


def test_hermes_config(tmp_path: Path, fake_binary: Path) -> None:
    prepared = launch("hermes", tmp_path, fake_binary)
    path = prepared.config_files[0]
    assert path.parent == Path(prepared.env["HERMES_HOME"])
    model = yaml.safe_load(path.read_text())["model"]
    assert model == {
        "provider": "custom",
        "base_url": BASE,
        "default": "org/model-1",
        "api_key": prepared.env["OPENAI_API_KEY"],
    }
    assert prepared.argv[1:] == ["-z", "do it", "--yolo"]


def test_codex_config(tmp_path: Path, fake_binary: Path) -> None:
    prepared = launch("codex", tmp_path, fake_binary, prompt='say "hi"')
    path = prepared.config_files[0]
    assert path.parent == Path(prepared.env["CODEX_HOME"])
    config = tomllib.loads(path.read_text())
    provider = config["model_providers"][config["model_provider"]]
    assert (provider["base_url"], provider["wire_api"]) == (BASE, "responses")
    assert prepared.env[provider["env_key"]]
    assert config["model"] == "org/model-1"
    assert prepared.argv[1] == "exec"
    assert prepared.argv[-1] == 'say "hi"'
    assert {"--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"} <= set(
        prepared.argv
    )


def test_claude_uses_the_root_url(tmp_path: Path, fake_binary: Path) -> None:
    prepared = launch("claude", tmp_path, fake_binary)
    assert prepared.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9999/s/run-1"
    assert prepared.env["ANTHROPIC_MODEL"] == "org/model-1"
    assert [path.name for path in prepared.config_files] == [".profile"]
    assert prepared.argv[1:3] == ["-p", "do it"]


def test_run_harness_captures_output_and_exit_code(tmp_path: Path, fake_binary: Path) -> None:
    run = run_harness(launch("pi", tmp_path, fake_binary), timeout=30)
    assert (run.returncode, run.timed_out) == (3, False)
    assert "args:--provider scripted" in run.stdout
    assert f"pwd:{(tmp_path / 'ws').resolve()}" in run.stdout
    assert "secret:unset" in run.stdout
    assert run.stderr.strip() == "to stderr"
    assert "to stderr" in run.output


def test_run_harness_kills_on_timeout(tmp_path: Path, fake_binary: Path) -> None:
    prepared = launch("pi", tmp_path, fake_binary)
    prepared.argv[1:] = ["sleep"]
    run = run_harness(prepared, timeout=0.5)
    assert run.timed_out
    assert run.seconds < 10
    assert run.returncode != 0


def test_find_harness(tmp_path: Path, fake_binary: Path) -> None:
    assert find_harness("pi", root=tmp_path) is None
    installed = tmp_path / "pi/node_modules/.bin/pi"
    installed.parent.mkdir(parents=True)
    installed.symlink_to(fake_binary)
    assert find_harness("pi", root=tmp_path) == installed
    with pytest.raises(ValueError, match="unknown harness"):
        find_harness("vim", root=tmp_path)


def test_prepare_launch_needs_an_installed_harness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAFEAGENTS_HARNESS_DIR", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="install-harnesses"):
        prepare_launch("codex", BASE, "m", tmp_path, "p", tmp_path / "state")
    with pytest.raises(ValueError, match="unknown harness"):
        prepare_launch("vim", BASE, "m", tmp_path, "p", tmp_path / "state", binary=tmp_path)


@pytest.mark.parametrize("thinking", [False, True])
def test_reasoning_follows_the_thinking_setting(
    thinking: bool, tmp_path: Path, fake_binary: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pi = prepare_launch(
        "pi", BASE, "m", workspace, "p", tmp_path / "pi", binary=fake_binary, thinking=thinking
    )
    model = json.loads(pi.config_files[0].read_text())["providers"]["scripted"]["models"][0]
    assert model["reasoning"] is thinking
    claude = prepare_launch(
        "claude", BASE, "m", workspace, "p", tmp_path / "cl", binary=fake_binary, thinking=thinking
    )
    assert ("MAX_THINKING_TOKENS" in claude.env) is thinking
