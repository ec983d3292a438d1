"""End to end: tasks of every class generated from a tiny repository pass ``tasks validate``;
what the agent sees, what stays hidden, and that the verifier cannot be talked round."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from tiny_repo_kit import make_repo

from safeagents.cli import main
from trainer.tasks import (
    GenerateOptions,
    SubprocessRunner,
    copy_workspace,
    generate_tasks,
    load_tasks,
)

# Tests that pass whatever the code does, under the names the repository's tests have.
TRIVIAL = {
    "test_core.py": ["test_clamp", "test_mean", "test_word_count"],
    "test_extra.py": ["test_fizzbuzz"],
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("generate")
    repo = make_repo(base / "calc-repo")
    code = main(
        [
            *("tasks", "generate", "--repo", str(repo), "--out", str(base / "out")),
            *("--limit", "4", "--held-out", "--seed", "3"),
        ]
    )
    assert code == 0
    return base / "out"


def test_every_class_is_generated_and_validates(
    generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = load_tasks(generated)
    assert sorted(task.config.metadata.safeagents.task_class or "" for task in tasks) == [
        "build",
        "extend",
        "qa",
        "repair",
    ]
    assert all(task.held_out for task in tasks)
    assert {task.config.metadata.safeagents.repository for task in tasks} == {"calc-repo"}
    assert all(task.config.metadata.difficulty in ("easy", "medium", "hard") for task in tasks)
    assert main(["tasks", "validate", str(generated)]) == 0
    assert "4 valid, 0 invalid of 4" in capsys.readouterr().out


def _task(generated: Path, task_class: str) -> Path:
    (found,) = generated.glob(f"calc-repo-{task_class}-001")
    return found


def test_build_and_extend_hide_the_tests_and_remove_the_code(generated: Path) -> None:
    for task_class in ("build", "extend"):
        root = _task(generated, task_class)
        spec = json.loads((root / "tests" / "spec.json").read_text())
        workspace = root / "environment" / "workspace"
        for hidden in spec["files"]:
            assert not (workspace / hidden).exists()
            assert (root / "tests" / "files" / hidden).is_file()
        config = tomllib.loads((root / "task.toml").read_text())["metadata"]["safeagents"]
        path, _, name = config["target"].partition(":")
        source = (workspace / path).read_text()
        if task_class == "build":
            assert f'raise NotImplementedError("{name}")' in source
        else:
            assert (
                f"def {name}(" not in source
                and f"`{path}`" in (root / "instruction.md").read_text()
            )
        assert config["lines_removed"] > 0 and config["tests_involved"] >= 1


def test_repair_and_qa_keep_the_repository_visible(generated: Path) -> None:
    repair = _task(generated, "repair")
    assert (repair / "environment" / "workspace" / "tests" / "test_core.py").is_file()
    assert "Do not change the tests" in (repair / "instruction.md").read_text()
    qa = _task(generated, "qa")
    expected = (qa / "solution" / "answer.txt").read_text().strip()
    assert json.loads((qa / "tests" / "spec.json").read_text()) == {
        "kind": "answer",
        "expected": expected,
    }
    assert "answer.txt" in (qa / "instruction.md").read_text()


def test_the_verifier_restores_the_tests_and_counts_the_passes(
    generated: Path, tmp_path: Path
) -> None:
    (task,) = [t for t in load_tasks(generated) if t.id == "calc-repo-repair-001"]
    runner = SubprocessRunner()
    rewritten = copy_workspace(task, tmp_path / "rewritten")
    for test_file, names in TRIVIAL.items():
        body = "".join(f"def {name}():\n    pass\n\n\n" for name in names)
        (rewritten / "tests" / test_file).write_text(body)
    assert not runner.verify(task, rewritten).success  # the hidden originals are run
    skipping = copy_workspace(task, tmp_path / "skipping")
    (skipping / "conftest.py").write_text(
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
        "    for item in items:\n        item.add_marker(pytest.mark.skip)\n"
    )
    verdict = runner.verify(task, skipping)
    assert not verdict.success and "0 of" in verdict.output
    answered = copy_workspace(task, tmp_path / "answered")
    assert runner.solve(task, answered).exit_code == 0
    assert runner.verify(task, answered).success


def test_the_seed_fixes_what_is_generated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc-repo")

    def targets(out: str) -> list[str]:
        options = GenerateOptions(repo=repo, out=tmp_path / out, classes=["qa"], limit=1, seed=7)
        result = generate_tasks(options)
        return [(path / "task.toml").read_text() for path in result.written]

    assert targets("one") == targets("two") != []


def test_generate_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    assert main(["tasks", "generate", "--repo", str(tmp_path), "--out", out, "--classes", "x"]) == 2
    assert "--classes: unknown x; choose from repair, qa, build, extend" in capsys.readouterr().err
    assert main(["tasks", "generate", "--repo", str(tmp_path / "no"), "--out", out]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert main(["tasks", "generate", "--repo", str(tmp_path), "--out", out, "--limit", "0"]) == 2
