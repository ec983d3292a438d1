"""Per-harness config files, arguments and environment for an offline, non-interactive run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml

__all__ = ["RecipeInput", "RecipeOutput", "claude", "codex", "hermes", "opencode", "pi"]

CONTEXT_WINDOW = 131072
MAX_OUTPUT = 8192


@dataclass(frozen=True, slots=True)
class RecipeInput:
    """What a recipe is given: where the model is and where the harness runs."""

    base_url: str
    model: str
    workspace: Path
    prompt: str
    state: Path
    home: Path
    api_key: str
    thinking: bool = False
    """The model reasons before answering (a training run's setting): harness configs that
    switch reasoning on or off follow it."""


@dataclass(frozen=True, slots=True)
class RecipeOutput:
    """What a recipe produces: arguments after the executable, env additions, files to write."""

    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    files: dict[Path, str] = field(default_factory=dict)


def opencode(run: RecipeInput) -> RecipeOutput:
    """``opencode run``; provider via ``@ai-sdk/openai-compatible`` in the global config."""
    config = {
        "$schema": "https://opencode.ai/config.json",
        "model": f"scripted/{run.model}",
        "small_model": f"scripted/{run.model}",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"edit": "allow", "bash": "allow", "external_directory": "allow"},
        "provider": {
            "scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": run.base_url, "apiKey": run.api_key},
                "models": {
                    run.model: {
                        "name": run.model,
                        "tool_call": True,
                        "limit": {"context": CONTEXT_WINDOW, "output": MAX_OUTPUT},
                    }
                },
            }
        },
    }
    path = run.home / ".config/opencode/opencode.json"
    env = {
        "OPENCODE_CONFIG": str(path),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
    }
    args = ["run", "--model", f"scripted/{run.model}", run.prompt]
    return RecipeOutput(args, env, {path: json.dumps(config, indent=2)})


def pi(run: RecipeInput) -> RecipeOutput:
    """``pi -p``; provider in ``models.json`` under ``PI_CODING_AGENT_DIR``."""
    agent_dir = run.state / "pi-agent"
    models = {
        "providers": {
            "scripted": {
                "baseUrl": run.base_url,
                "api": "openai-completions",
                "apiKey": run.api_key,
                "models": [
                    {
                        "id": run.model,
                        "name": run.model,
                        "reasoning": run.thinking,
                        "input": ["text"],
                        "contextWindow": CONTEXT_WINDOW,
                        "maxTokens": MAX_OUTPUT,
                    }
                ],
            }
        }
    }
    env = {
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
    }
    args = ["--provider", "scripted", "--model", run.model, "-p", run.prompt]
    return RecipeOutput(args, env, {agent_dir / "models.json": json.dumps(models, indent=2)})


def hermes(run: RecipeInput) -> RecipeOutput:
    """``hermes -z PROMPT --yolo``; a ``custom`` provider in ``$HERMES_HOME/config.yaml``."""
    hermes_home = run.state / "hermes-home"
    config = {
        "model": {
            "provider": "custom",
            "base_url": run.base_url,
            "default": run.model,
            "api_key": run.api_key,
        },
        "agent": {"max_turns": 30, "verify_on_stop": False},
        "terminal": {"backend": "local", "cwd": str(run.workspace)},
    }
    env = {
        "HERMES_HOME": str(hermes_home),
        "OPENAI_API_KEY": run.api_key,
        "TERMINAL_CWD": str(run.workspace),
    }
    files = {hermes_home / "config.yaml": yaml.safe_dump(config, sort_keys=False)}
    return RecipeOutput(["-z", run.prompt, "--yolo"], env, files)


def _toml_string(value: str) -> str:
    return json.dumps(value)


def codex(run: RecipeInput) -> RecipeOutput:
    """``codex exec``; a Responses-API provider in ``$CODEX_HOME/config.toml``."""
    codex_home = run.state / "codex-home"
    config = "\n".join(
        [
            f"model = {_toml_string(run.model)}",
            'model_provider = "scripted"',
            'approval_policy = "never"',
            'sandbox_mode = "danger-full-access"',
            "check_for_update_on_startup = false",
            f"model_context_window = {CONTEXT_WINDOW}",
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[feedback]",
            "enabled = false",
            "",
            "[model_providers.scripted]",
            'name = "scripted"',
            f"base_url = {_toml_string(run.base_url)}",
            'env_key = "SCRIPTED_API_KEY"',
            'wire_api = "responses"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "supports_websockets = false",
            "",
        ]
    )
    env = {"CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": run.api_key}
    args = [
        "exec",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "--ephemeral",
        "--color",
        "never",
        "-C",
        str(run.workspace),
        run.prompt,
    ]
    return RecipeOutput(args, env, {codex_home / "config.toml": config})


def claude(run: RecipeInput) -> RecipeOutput:
    """``claude -p``; Anthropic Messages at ``ANTHROPIC_BASE_URL`` (the root, without ``/v1``)."""
    root = run.base_url.removesuffix("/v1")
    config_dir = run.home / ".claude"
    env = {
        "ANTHROPIC_BASE_URL": root,
        "ANTHROPIC_API_KEY": run.api_key,
        "ANTHROPIC_MODEL": run.model,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": run.model,
        "ANTHROPIC_DEFAULT_SONNET_MODEL": run.model,
        "ANTHROPIC_DEFAULT_OPUS_MODEL": run.model,
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "IS_SANDBOX": "1",
    }
    if run.thinking:
        env["MAX_THINKING_TOKENS"] = str(MAX_OUTPUT // 2)
    args = [
        "-p",
        run.prompt,
        "--model",
        run.model,
        "--dangerously-skip-permissions",
        "--output-format",
        "text",
    ]
    return RecipeOutput(args, env)
