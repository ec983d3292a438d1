"""Loading Harbor-format task directories: structure, the typed config, and where each
problem is (file, and line:column for task.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest
from task_kit import TASK_TOML, write_task

import trainer.tasks
from trainer.tasks import TaskDirError, find_task_dirs, load_task, load_tasks

# A task as Harbor's own template and terminal-bench's mapper write it: keys this model does
# not name (author_email, estimated_duration_sec, build_timeout_sec, healthcheck...) are kept.
HARBOR_TOML = """version = "1.0"

[metadata]
author_name = "Someone"
author_email = "someone@example.com"
difficulty = "Medium"
category = "software_engineering"
tags = ["python", "bugfix"]
estimated_duration_sec = 300.0

[verifier]
timeout_sec = 900.0

[agent]
timeout_sec = 900.0

[environment]
build_timeout_sec = 600.0
docker_image = "python:3.12"
cpus = 2
memory_mb = 4096
allow_internet = false

[environment.healthcheck]
command = "true"
"""


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in dir(trainer.tasks) if not name.startswith("_")}
    assert sorted(trainer.tasks.__all__) == sorted(public)


def test_a_task_loads_with_its_typed_config_and_paths(tmp_path: Path) -> None:
    root = write_task(tmp_path / "fix-double")
    task = load_task(root)
    assert (task.id, task.name, task.instruction) == (
        "fix-double",
        "safeagents/fix-double",
        "Fix `double` in mathy.py.",
    )
    assert task.config.metadata.difficulty == "easy"
    assert task.config.verifier.timeout_sec == 60.0
    assert task.config.agent.timeout_sec == 120.0
    assert task.workspace == root.resolve() / "environment" / "workspace"
    assert task.test_script == root.resolve() / "tests" / "test.sh"
    assert task.has_oracle and not task.held_out


def test_a_dataset_written_for_harbor_loads_unchanged(tmp_path: Path) -> None:
    root = write_task(tmp_path / "tb-task", toml=HARBOR_TOML, nested_workspace=False)
    task = load_task(root)
    assert task.name == "tb-task"  # no [task] section: the directory names it
    assert task.config.metadata.difficulty == "medium"
    assert task.config.metadata.tags == ["python", "bugfix"]
    assert task.config.environment.cpus == 2 and task.config.environment.memory_mb == 4096
    assert task.config.model_extra == {"version": "1.0"}
    assert task.config.metadata.model_extra is not None
    assert task.config.metadata.model_extra["author_email"] == "someone@example.com"
    assert task.config.environment.model_extra == {"healthcheck": {"command": "true"}}
    assert task.workspace == root.resolve() / "environment"  # no workspace/: all of it


def test_safeagents_metadata_is_typed_and_marks_held_out_tasks(tmp_path: Path) -> None:
    toml = TASK_TOML + (
        '\n[metadata.safeagents]\ntask_class = "repair"\nrepository = "mathy"\n'
        "held_out = true\nlines_removed = 1\ntests_involved = 1\n"
    )
    task = load_task(write_task(tmp_path / "t", toml=toml))
    assert task.held_out
    assert task.config.metadata.safeagents.task_class == "repair"
    assert task.config.metadata.safeagents.repository == "mathy"


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        (
            '[verifier]\ntimeout_sec = "soon"\n',
            "task.toml:2:1: verifier.timeout_sec: Input should be a valid number",
        ),
        (
            '[metadata]\ncategory = "x"\n  difficulty = "impossible"\n',
            "task.toml:3:3: metadata.difficulty: Input should be 'easy', 'medium', 'hard'",
        ),
        (
            "[metadata.safeagents]\nheld_out = true\nsplit = 3\n",
            "task.toml:3:1: metadata.safeagents.split: Extra inputs are not permitted",
        ),
        ("[agent]\ntimeout_sec = -5\n", "task.toml:2:1: agent.timeout_sec: Value error, must"),
        ('[task]\nname = "no-org"\n', "task.toml:2:1: task.name: String should match"),
        ('[environment]\nos = "windows"\n', "task.toml:2:1: environment.os: Input should be"),
        ("[verifier\ntimeout_sec = 1\n", "task.toml:1:10: invalid TOML: Expected ']'"),
        ("verifier = 3\n", "task.toml:1:1: verifier: Input should be a valid dictionary"),
        ('[[steps]]\nname = "one"\n', "task.toml: multi-step tasks ([[steps]]) are not"),
    ],
)
def test_config_problems_are_positioned(tmp_path: Path, toml: str, expected: str) -> None:
    root = write_task(tmp_path / "t", toml=toml)
    with pytest.raises(TaskDirError) as raised:
        load_task(root)
    assert any(problem.startswith(f"{root}/{expected}") for problem in raised.value.problems), (
        raised.value.problems
    )


def test_every_structural_problem_is_listed(tmp_path: Path) -> None:
    root = write_task(tmp_path / "t", toml=None, instruction="  \n", test_sh=None)
    (root / "solution" / "solve.sh").unlink()
    with pytest.raises(TaskDirError) as raised:
        load_task(root)
    assert raised.value.problems == [
        f"{root}: missing task.toml (Harbor's task config)",
        f"{root}: missing tests/test.sh (the verifier)",
        f"{root}: missing solution/solve.sh (the oracle)",
        f"{root / 'instruction.md'}: empty prompt",
    ]


def test_windows_only_tasks_are_named_as_such(tmp_path: Path) -> None:
    root = write_task(tmp_path / "t", test_sh=None)
    (root / "tests").mkdir()
    (root / "tests" / "test.bat").write_text("exit 0")
    with pytest.raises(TaskDirError, match=r"Windows tasks are not supported"):
        load_task(root)


def test_the_oracle_is_optional_for_loading(tmp_path: Path) -> None:
    assert not load_task(write_task(tmp_path / "t", solve_sh=None)).has_oracle


def test_datasets_and_single_tasks_are_found(tmp_path: Path) -> None:
    write_task(tmp_path / "set" / "b")
    write_task(tmp_path / "set" / "a")
    (tmp_path / "set" / ".cache").mkdir()
    (tmp_path / "set" / "README.md").write_text("not a task")
    assert [p.name for p in find_task_dirs(tmp_path / "set")] == ["a", "b"]
    assert find_task_dirs(tmp_path / "set" / "a") == [tmp_path / "set" / "a"]
    # a directory of datasets: one level more
    assert [p.name for p in find_task_dirs(tmp_path)] == ["a", "b"]
    assert [task.id for task in load_tasks([tmp_path / "set"])] == ["a", "b"]


def test_every_problem_of_every_task_and_duplicate_ids_are_listed(tmp_path: Path) -> None:
    write_task(tmp_path / "one" / "same")
    write_task(tmp_path / "two" / "same")
    write_task(tmp_path / "two" / "bad", instruction=None)
    with pytest.raises(TaskDirError) as raised:
        load_tasks([tmp_path / "one", tmp_path / "two", tmp_path / "nowhere"])
    assert raised.value.problems == [
        f"{tmp_path / 'two' / 'bad'}: missing instruction.md (the prompt)",
        f"{tmp_path / 'nowhere'}: not a directory (a task has task.toml and instruction.md)",
        f"{(tmp_path / 'two' / 'same').resolve()}: task id 'same' also names "
        f"{(tmp_path / 'one' / 'same').resolve()}",
    ]
    with pytest.raises(TaskDirError, match="no tasks in it"):
        load_tasks(tmp_path / "one" / "same" / "environment")
