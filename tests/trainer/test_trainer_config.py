"""The trainer's YAML config: defaults from the issue, validation errors at file:line:col."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from trainer import ConfigError, TrainerConfig, load_config
from trainer._config import choose_sandbox


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "train.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _errors(tmp_path: Path, text: str) -> list[str]:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    prefix = f"{path}:"
    lines = str(raised.value).splitlines()
    assert all(line.startswith(prefix) for line in lines)
    assert [str(issue) for issue in raised.value.issues] == lines
    return [line.removeprefix(prefix) for line in lines]


def test_a_minimal_config_gets_the_defaults_of_the_design(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, "base_model: Qwen/Qwen3-8B\nharnesses: [opencode]\n"))
    assert config.base_model == "Qwen/Qwen3-8B"
    assert config.harnesses == ("opencode",)
    assert (config.lora.rank, config.lora.target_modules) == (32, "all-linear")
    assert config.optimizer.learning_rate == 1e-5
    assert config.sampling.temperature == 0.8
    assert config.sampling.max_tokens_per_turn == 32_768
    assert config.grpo.group_size == 8
    assert config.grpo.token_budget == 65_536
    assert config.grpo.max_staleness == 4
    assert config.grpo.publish_every == 10
    assert config.grpo.scale_std is False
    assert (config.reward.tool_call_bonus, config.reward.tool_call_horizon) == (0.1, 15)
    assert config.vllm.base_url == "http://127.0.0.1:8000"
    assert config.proxy.admin_url == "http://127.0.0.1:8787/safeagents/v1"
    assert config.proxy.store == "safeagents.db"


def test_every_section_can_be_set(tmp_path: Path) -> None:
    text = """\
base_model: /models/tiny-llama
harnesses: [opencode, claude-code, mini-swe-agent]
output_dir: runs/a
lora: {rank: 16, alpha: 32, dropout: 0.05, target_modules: [q_proj, v_proj]}
optimizer: {learning_rate: 2e-5, weight_decay: 0.01, max_grad_norm: 0.5}
sampling: {temperature: 1.0, max_tokens_per_turn: 512}
grpo: {group_size: 4, scale_std: true, token_budget: 4096, max_staleness: 2, publish_every: 3}
reward: {tool_call_bonus: 0.2, tool_call_horizon: 30}
vllm: {base_url: "http://gpu:8000/"}
proxy: {admin_url: "https://proxy:8787/safeagents/v1", store: /data/s.db}
"""
    config = load_config(_write(tmp_path, text))
    assert config.lora.target_modules == ("q_proj", "v_proj")
    assert config.optimizer.learning_rate == 2e-5  # PyYAML reads 2e-5 as text
    assert config.grpo.scale_std is True and config.grpo.max_staleness == 2
    assert config.vllm.base_url == "http://gpu:8000"
    assert config.proxy.store == "/data/s.db"
    assert config.max_loras == 3 * (2 + 2)


def test_unknown_keys_are_reported_where_they_are_written_with_a_suggestion(
    tmp_path: Path,
) -> None:
    text = "base_model: m\nharnesses: [pi]\nlora:\n  rnk: 16\ngrpo:\n  group_sise: 4\nextra: 1\n"
    assert _errors(tmp_path, text) == [
        "4:3: unknown key 'rnk' (did you mean 'rank'?)",
        "6:3: unknown key 'group_sise' (did you mean 'group_size'?)",
        "7:1: unknown key 'extra'",
    ]


def test_wrong_values_are_reported_at_the_value(tmp_path: Path) -> None:
    text = """\
base_model: m
harnesses: [opencode, Open Code]
lora:
  target_modules: everything
grpo:
  group_size: 1
  token_budget: lots
vllm:
  base_url: ftp://x
"""
    assert _errors(tmp_path, text) == [
        "2:23: harnesses[1]: harness name 'Open Code' must be lowercase letters, digits, "
        "'-' and '_'",
        "4:19: lora.target_modules: write 'all-linear' or a list of module names",
        "6:15: grpo.group_size: Input should be greater than or equal to 2",
        "7:17: grpo.token_budget: Input should be a valid integer, unable to parse string "
        "as an integer",
        "9:13: vllm.base_url: expected an http(s) URL, got 'ftp://x'",
    ]


def test_missing_required_keys_and_duplicates(tmp_path: Path) -> None:
    assert _errors(tmp_path, "harnesses: [pi]\n") == ["1:1: missing required key 'base_model'"]
    assert _errors(tmp_path, "base_model: m\nharnesses: []\n") == [
        "2:12: harnesses: list at least one harness to train an adapter for"
    ]
    assert _errors(tmp_path, "base_model: m\nharnesses: [pi, opencode, pi]\n") == [
        "2:12: harnesses: harness 'pi' is listed twice"
    ]
    assert _errors(tmp_path, "base_model: m\nbase_model: n\nharnesses: [pi]\n") == [
        "2:1: duplicate key 'base_model'"
    ]


def test_syntax_errors_and_non_mappings(tmp_path: Path) -> None:
    (syntax,) = _errors(tmp_path, "base_model: [m\n")
    assert syntax.startswith("2:1: invalid YAML")
    assert _errors(tmp_path, "- a\n- b\n") == ["1:1: the config must be a mapping of keys"]
    assert _errors(tmp_path, "") == [
        "1:1: missing required key 'base_model'",
        "1:1: missing required key 'harnesses'",
    ]


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read file"):
        load_config(tmp_path / "absent.yaml")


def test_configs_are_frozen_and_validate_from_python() -> None:
    config = TrainerConfig.model_validate({"base_model": "m", "harnesses": ["pi"]})
    with pytest.raises(ValidationError):
        config.base_model = "other"
    assert config.max_loras == 6


def test_sandbox_sets_the_backend_of_a_sandbox_environment_only(tmp_path: Path) -> None:
    base = "base_model: m\nharnesses: [pi]\nenvironment:\n"
    sandboxed = load_config(
        _write(
            tmp_path, f"{base}  factory: trainer:SandboxEnvironment\n  options: {{harness: pi}}\n"
        )
    )
    choose_sandbox(sandboxed, None)
    assert "backend" not in sandboxed.environment.options  # type: ignore[union-attr]
    choose_sandbox(sandboxed, "harbor")
    assert sandboxed.environment.options == {"harness": "pi", "backend": "harbor"}  # type: ignore[union-attr]
    toy = load_config(_write(tmp_path, f"{base}  factory: trainer:ToyEnvironment\n"))
    with pytest.raises(ValueError, match="--sandbox applies to the trainer:SandboxEnvironment"):
        choose_sandbox(toy, "local")
