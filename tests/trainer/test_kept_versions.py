"""Published adapter versions kept on disk for evaluation (every one, or every Nth), each with
its step and metrics; the staleness settings and the serving window they imply."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from trainer import TrainerConfig
from trainer._batching import Staleness
from trainer._publish import VERSION_FILE, AdapterPublisher


class Saves:
    def save_pretrained(self, save_directory: str) -> None:
        Path(save_directory, "adapter_model.safetensors").write_bytes(b"weights")


def publisher(tmp_path: Path, keep_every: int, unloaded: list[str]) -> AdapterPublisher:
    server: Any = SimpleNamespace(
        load_adapter=lambda name, path: None, unload_adapter=unloaded.append
    )
    proxy: Any = SimpleNamespace(set_alias=lambda harness, model: None)
    return AdapterPublisher(
        harness="pi",
        output_dir=tmp_path,
        server=server,
        proxy=proxy,
        max_staleness=1,
        keep_every=keep_every,
    )


@pytest.mark.parametrize(
    ("keep_every", "kept"), [(1, [1, 2, 3, 4, 5, 6]), (3, [3, 5, 6]), (0, [5, 6])]
)
def test_versions_leaving_serving_stay_on_disk_when_kept(
    tmp_path: Path, keep_every: int, kept: list[int]
) -> None:
    unloaded: list[str] = []
    published = publisher(tmp_path, keep_every, unloaded)
    for step in range(1, 7):
        name = published.publish(Saves())
        published.record(published.version, step=step * 10, metrics={"reward_mean": step / 10})
        assert name == f"pi-v{step}"
    assert unloaded == ["pi-v1", "pi-v2", "pi-v3", "pi-v4"]  # the window is v5 and v6
    on_disk = sorted(int(p.name[1:]) for p in (tmp_path / "pi").iterdir())
    assert on_disk == kept
    info = json.loads((tmp_path / "pi" / f"v{kept[0]}" / VERSION_FILE).read_text())
    assert info == {
        "name": f"pi-v{kept[0]}",
        "version": kept[0],
        "step": kept[0] * 10,
        "metrics": {"reward_mean": kept[0] / 10},
    }


def test_a_version_saved_elsewhere_is_copied_in_when_kept(tmp_path: Path) -> None:
    published = publisher(tmp_path / "runs", 2, [])
    trl_dir = tmp_path / ".vllm_lora" / "pi-v2"
    trl_dir.mkdir(parents=True)
    (trl_dir / "adapter_config.json").write_text("{}")
    kept = published.record(2, step=10, metrics={"loss": 0.5}, source=trl_dir)
    assert kept == tmp_path / "runs" / "pi" / "v2"
    assert (kept / "adapter_config.json").read_text() == "{}"
    assert json.loads((kept / VERSION_FILE).read_text())["step"] == 10
    assert published.record(3, step=20, source=trl_dir) is None
    assert not (tmp_path / "runs" / "pi" / "v3").exists()


def test_staleness_settings_default_to_four_versions_every_ten_steps() -> None:
    config = TrainerConfig(base_model="m", harnesses=("pi",))
    grpo = config.grpo
    assert (grpo.publish_every, grpo.max_staleness, grpo.staleness_unit) == (10, 4, "versions")
    assert config.environment is None and config.max_loras == 6
    # Four versions behind can be up to ~49 steps: the unit is explicit, the age recorded.
    rule = grpo.staleness()
    assert rule.steps_behind(1, step=59) == 49 and not rule.stale(1, current_version=5, step=59)
    by_steps = TrainerConfig.model_validate(
        {
            "base_model": "m",
            "harnesses": ["pi"],
            "grpo": {"max_staleness": 15, "staleness_unit": "steps", "publish_every": 5},
        }
    )
    steps_rule = by_steps.grpo.staleness(first_trained=1)
    assert steps_rule == Staleness(15, "steps", 5, 1)
    assert steps_rule.versions_kept == 3 and by_steps.max_loras == 5
    assert steps_rule.stale(2, current_version=5, step=21)  # v2 holds step 5: 16 behind
    assert not steps_rule.stale(2, current_version=5, step=20)


def test_environment_defaults_keep_48_sessions_live_and_time_groups_out() -> None:
    config = TrainerConfig.model_validate(
        {"base_model": "m", "harnesses": ["pi"], "environment": {"factory": "a:b"}}
    )
    assert config.environment is not None
    assert config.environment.concurrency == 48
    assert config.environment.group_timeout == 1800.0
    assert config.report_to == "auto"
