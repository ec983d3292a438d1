"""Training on Harbor task sets: curriculum weights by difficulty from each task's
``task.toml``, and held-out tasks refused for training with a clear error."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from tasks.task_kit import TASK_TOML, write_task

from safeagents.scripted import find_harness
from trainer import Task, TrainerConfig, Training
from trainer._curriculum import (
    DEFAULT_WEIGHTS,
    HeldOutError,
    curriculum_weights,
    refuse_held_out,
    weighted,
)
from trainer._sandbox_env import SandboxEnvironment

needs_pi = pytest.mark.skipif(find_harness("pi") is None, reason="pi is not installed")


def test_weights_default_toward_medium_and_hard_and_are_checked() -> None:
    assert DEFAULT_WEIGHTS["medium"] > DEFAULT_WEIGHTS["easy"]
    assert DEFAULT_WEIGHTS["hard"] > DEFAULT_WEIGHTS["easy"]
    assert curriculum_weights({"hard": 5})["hard"] == 5
    with pytest.raises(ValueError, match="unknown difficulty 'brutal'"):
        curriculum_weights({"brutal": 1})
    with pytest.raises(ValueError, match="whole number >= 0, got -1"):
        curriculum_weights({"easy": -1})
    with pytest.raises(ValueError, match=r"whole number >= 0, got 1\.5"):
        curriculum_weights({"easy": 1.5})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="every weight is 0"):
        curriculum_weights(dict.fromkeys(DEFAULT_WEIGHTS, 0))


def test_tasks_are_drawn_as_often_as_their_weight() -> None:
    tasks = [
        Task("e", "", {"weight": 1}),
        Task("h", "", {"weight": 3}),
        Task("skip", "", {"weight": 0}),
        Task("plain", ""),
    ]
    drawn = weighted(tasks, seed=1)
    assert Counter(task.id for task in drawn) == {"e": 1, "h": 3, "plain": 1}
    assert weighted(tasks, seed=1) == drawn
    with pytest.raises(ValueError, match="every task has weight 0"):
        weighted([Task("skip", "", {"weight": 0})])


def test_held_out_tasks_are_named_in_the_refusal() -> None:
    refuse_held_out([Task("a", "", {"held_out": False}), Task("b", "")])
    with pytest.raises(HeldOutError, match=r"1 held-out task\(s\) .*\(b\).*safeagents eval"):
        refuse_held_out([Task("a", ""), Task("b", "", {"held_out": True})])


def task_toml(difficulty: str, held_out: bool = False) -> str:
    toml = TASK_TOML.replace('difficulty = "easy"', f'difficulty = "{difficulty}"')
    return toml + ("\n[metadata.safeagents]\nheld_out = true\n" if held_out else "")


@needs_pi
def test_a_task_set_trains_by_difficulty_and_never_on_held_out_tasks(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    write_task(tasks / "easy-one", toml=task_toml("easy"))
    write_task(tasks / "hard-one", toml=task_toml("hard"))
    write_task(tasks / "held-one", toml=task_toml("medium", held_out=True))
    environment = SandboxEnvironment(harness="pi", tasks_dir=tasks, curriculum={"hard": 3})
    data = {task.id: dict(task.data) for task in environment.tasks()}
    assert data == {
        "easy-one": {"difficulty": "easy", "held_out": False, "weight": 1},
        "hard-one": {"difficulty": "hard", "held_out": False, "weight": 3},
    }
    config = TrainerConfig.model_validate(
        {
            "base_model": "tiny",
            "harnesses": ["pi"],
            "grpo": {"group_size": 2},
            "proxy": {"store": str(tmp_path / "sa.db")},
        }
    )
    training = Training(config, environment=environment)
    try:
        assert Counter(task.id for task in training.curriculum) == {"easy-one": 1, "hard-one": 3}
    finally:
        training.close()
    with_held_out = SandboxEnvironment(harness="pi", tasks_dir=tasks, held_out=True)
    with pytest.raises(HeldOutError, match=r"held-one"):
        Training(config, environment=with_held_out)
