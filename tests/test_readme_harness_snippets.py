"""The README's per-harness snippets say what the tested launch recipes do."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

from safeagents.scripted import _recipes

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
MODEL = "MODEL"


def _section(title: str) -> str:
    start = README.index(f"**{title}**")
    end = README.find("\n**", start + 1)
    return README[start : end if end != -1 else None]


def _block(title: str, language: str) -> str:
    found = re.search(rf"```{language}\n(.*?)```", _section(title), re.DOTALL)
    assert found is not None, f"no {language} block for {title}"
    return found.group(1)


def _recipe(name: str, tmp_path: Path) -> _recipes.RecipeOutput:
    run = _recipes.RecipeInput(
        base_url="http://127.0.0.1:8787/s/run-42/v1",
        model=MODEL,
        workspace=tmp_path,
        prompt="the task",
        state=tmp_path / "state",
        home=tmp_path / "home",
        api_key="sk-upstream-key",
    )
    recipe = getattr(_recipes, name)
    assert callable(recipe)
    output = recipe(run)
    assert isinstance(output, _recipes.RecipeOutput)
    return output


def _only_file(output: _recipes.RecipeOutput) -> str:
    (content,) = output.files.values()
    return content


def test_the_quickstart_runs_the_demo() -> None:
    # activated, so every bare `safeagents …` the README and the demo print runs as printed
    command = "python3 -m venv .venv && . .venv/bin/activate && pip install -q . && safeagents demo"
    quickstart = README[README.index("## Quickstart") : README.index("## Auditing sessions")]
    assert command in quickstart


def test_opencode_snippet(tmp_path: Path) -> None:
    readme = json.loads(_block("opencode", "json"))
    recipe = json.loads(_only_file(_recipe("opencode", tmp_path)))
    ours, theirs = readme["provider"]["safeagents"], recipe["provider"]["scripted"]
    assert ours["npm"] == theirs["npm"]
    assert ours["models"] == theirs["models"]
    assert ours["options"]["baseURL"].endswith("/v1")
    assert readme["model"] == "safeagents/MODEL"


def test_pi_snippet(tmp_path: Path) -> None:
    readme = json.loads(_block("pi", "json"))["providers"]["safeagents"]
    recipe = json.loads(_only_file(_recipe("pi", tmp_path)))["providers"]["scripted"]
    assert {k: v for k, v in readme.items() if k != "apiKey"} == {
        k: v for k, v in recipe.items() if k != "apiKey"
    }


def test_hermes_snippet(tmp_path: Path) -> None:
    readme: dict[str, Any] = yaml.safe_load(_block("hermes-agent", "yaml"))
    recipe = yaml.safe_load(_only_file(_recipe("hermes", tmp_path)))
    assert readme["model"] == recipe["model"]


def test_codex_snippet(tmp_path: Path) -> None:
    readme = tomllib.loads(_block("codex", "toml"))
    recipe = tomllib.loads(_only_file(_recipe("codex", tmp_path)))
    ours = readme["model_providers"][readme["model_provider"]]
    theirs = recipe["model_providers"][recipe["model_provider"]]
    for key in ("wire_api", "supports_websockets"):
        assert ours[key] == theirs[key]
    assert ours["base_url"].endswith("/v1") and readme["model"] == recipe["model"]


def test_claude_snippet(tmp_path: Path) -> None:
    shown = set(re.findall(r"\b([A-Z][A-Z_]+)=", _block("claude-code", "sh")))
    recipe = _recipe("claude", tmp_path).env
    assert shown <= set(recipe)
    assert {"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_MODEL"} <= shown
    assert recipe["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8787/s/run-42"
    assert "http://127.0.0.1:8787/s/run-42" in _block("claude-code", "sh")
