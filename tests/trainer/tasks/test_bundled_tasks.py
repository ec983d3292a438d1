"""The bundled suite (``bundled-tasks/``): every class, a held-out repository, the sources'
licences, a small size, and tasks that validate."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from trainer.tasks import Task, load_tasks, validate_tasks

BUNDLED = Path(__file__).resolve().parents[3] / "bundled-tasks"


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return load_tasks(BUNDLED / "tasks")


def test_the_suite_loads_with_every_class_and_a_held_out_repository(tasks: list[Task]) -> None:
    assert 24 <= len(tasks) <= 48
    classes = Counter(task.config.metadata.safeagents.task_class for task in tasks)
    assert set(classes) == {"repair", "qa", "build", "extend"}
    split = {(task.config.metadata.safeagents.repository, task.held_out) for task in tasks}
    assert split == {("inflection", False), ("toolz", False), ("semver", True)}


def test_the_sources_licences_come_with_it_and_it_stays_small(tasks: list[Task]) -> None:
    assert sorted(path.name for path in (BUNDLED / "LICENSES").iterdir()) == [
        "inflection.txt",
        "semver.txt",
        "toolz.txt",
    ]
    for task in tasks:
        assert any(task.workspace.glob("LICENSE*")), task.id
    size = sum(
        os.path.getsize(Path(directory, name))
        for directory, _, names in os.walk(BUNDLED)
        for name in names
    )
    assert size < 5_000_000


def test_one_task_of_each_class_validates(tasks: list[Task]) -> None:
    chosen: dict[str | None, Path] = {}
    for task in tasks:
        chosen.setdefault(task.config.metadata.safeagents.task_class, task.root)
    reports = validate_tasks(chosen.values(), jobs=2)
    assert [report.problems for report in reports] == [[]] * 4
