"""The bundled suite (``bundled-tasks/``): every class, a held-out repository, the sources'
licences, stored compactly (each package once, each task as its difference) and
materialised into task folders that validate."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from trainer.tasks import (
    Task,
    bundled_tasks_path,
    is_bundle,
    load_tasks,
    read_store,
    validate_tasks,
)

BUNDLED = Path(__file__).resolve().parents[3] / "bundled-tasks"


def _size(root: Path) -> int:
    return sum(
        os.path.getsize(Path(directory, name))
        for directory, _, names in os.walk(root)
        for name in names
    )


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bundled_tasks_path(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def tasks(suite: Path) -> list[Task]:
    return load_tasks(suite)


def test_the_suite_loads_with_every_class_and_a_held_out_repository(tasks: list[Task]) -> None:
    assert 24 <= len(tasks) <= 48
    classes = Counter(task.config.metadata.safeagents.task_class for task in tasks)
    assert set(classes) == {"repair", "qa", "build", "extend"}
    split = {(task.config.metadata.safeagents.repository, task.held_out) for task in tasks}
    assert split == {("inflection", False), ("toolz", False), ("semver", True)}


def test_the_checkout_paths_load_the_same_suite(suite: Path, tasks: list[Task]) -> None:
    assert is_bundle(BUNDLED)
    ids = [task.id for task in tasks]
    assert [task.id for task in load_tasks(BUNDLED / "tasks")] == ids
    assert [task.id for task in load_tasks(BUNDLED)] == ids


def test_the_sources_licences_come_with_it_and_each_package_is_stored_once(
    suite: Path, tasks: list[Task]
) -> None:
    assert sorted(path.name for path in (BUNDLED / "LICENSES").iterdir()) == [
        "inflection.txt",
        "semver.txt",
        "toolz.txt",
    ]
    for task in tasks:
        assert any(task.workspace.glob("LICENSE*")), task.id
    stored = read_store(BUNDLED)
    assert sorted({name.split("/")[1] for name in stored if name.startswith("sources/")}) == [
        "inflection",
        "semver",
        "toolz",
    ]
    assert "shared/tests/check.py" in stored
    assert not list(BUNDLED.rglob("*.py"))  # third-party code stays in the store, out of the tree
    assert _size(BUNDLED) < 1_000_000 and _size(BUNDLED) * 5 < _size(suite)


def test_one_task_of_each_class_validates(tasks: list[Task]) -> None:
    chosen: dict[str | None, Path] = {}
    for task in tasks:
        chosen.setdefault(task.config.metadata.safeagents.task_class, task.root)
    reports = validate_tasks(chosen.values(), jobs=2)
    assert [report.problems for report in reports] == [[]] * 4
