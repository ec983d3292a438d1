"""What the trainer reads of a base model, from local files only: hybrid layers, the vLLM
tool parser, and the tracker TRL reports to."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("transformers")

from trainer import TrainerConfig
from trainer._async import refuse_hybrid
from trainer._models import hybrid_layers, model_type, report_to, tool_parser_for
from trainer._tiny import build_tiny_lfm2, build_tiny_llama


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {
        "llama": build_tiny_llama(root / "llama"),
        "lfm2": build_tiny_lfm2(root / "lfm2"),
    }


def test_a_hybrid_model_is_told_apart_and_gets_the_lfm2_tool_parser(
    models: dict[str, Path],
) -> None:
    assert model_type(models["lfm2"]) == "lfm2"
    assert hybrid_layers(models["lfm2"]) == {"conv"}
    assert tool_parser_for(models["lfm2"]) == "lfm2"
    assert hybrid_layers(models["llama"]) == frozenset()
    assert tool_parser_for(models["llama"]) == "hermes"


def test_the_async_trainer_refuses_a_hybrid_model_before_building_anything(
    models: dict[str, Path],
) -> None:
    def training(model: Path) -> Any:
        config = TrainerConfig(base_model=str(model), harnesses=("pi",))
        return SimpleNamespace(config=config)

    with pytest.raises(ValueError, match=r"\['conv'\].*safeagents train"):
        refuse_hybrid(training(models["lfm2"]))
    refuse_hybrid(training(models["llama"]))


def test_nothing_is_fetched_for_a_model_that_is_not_on_disk(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        hybrid_layers(tmp_path / "absent-model")


def test_report_to_picks_an_installed_tracker_and_refuses_a_missing_one() -> None:
    config = TrainerConfig(base_model="m", harnesses=("pi",))
    installed = [
        name for name in ("tensorboard", "trackio") if importlib.util.find_spec(name) is not None
    ]
    assert report_to(config) == installed[:1]
    assert report_to(config.model_copy(update={"report_to": "none"})) == []
    for name in ("tensorboard", "trackio"):
        chosen = config.model_copy(update={"report_to": name})
        if name in installed:
            assert report_to(chosen) == [name]
        else:
            with pytest.raises(ValueError, match="not installed"):
                report_to(chosen)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
def test_training_metrics_reach_tensorboard_as_well(
    models: dict[str, Path], tmp_path: Path
) -> None:
    pytest.importorskip("tensorboard")
    pytest.importorskip("trl")
    from trainer._environment import Task
    from trainer._grpo import StepBatch
    from trainer._trl import build_trainer

    config = TrainerConfig.model_validate(
        {
            "base_model": str(models["llama"]),
            "harnesses": ["pi"],
            "output_dir": str(tmp_path / "runs"),
            "grpo": {"group_size": 2, "max_steps": 2},
            "report_to": "tensorboard",
        }
    )
    trainer = build_trainer(
        config,
        [Task("t", "fix it")],
        step_source=lambda task_ids: StepBatch([], {"groups": 1}),
        on_step=lambda step, model: None,
    )
    trainer.train()
    events = list((tmp_path / "runs").rglob("events.out.tfevents.*"))
    assert events and any(path.stat().st_size > 0 for path in events)
