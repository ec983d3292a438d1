"""Task bundles: task folders packed as their difference from a repository, materialised
back byte for byte wherever tasks are loaded, cached by content, and refused when broken."""

from __future__ import annotations

import importlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from task_kit import BROKEN, FIXED, TASK_TOML, write_task

from safeagents.cli import main
from trainer.tasks import (
    BundleError,
    TaskDirError,
    find_task_dirs,
    load_tasks,
    materialize_bundle,
    pack_bundle,
    read_store,
    resolve_task_path,
    write_store,
)

TOML = TASK_TOML + '\n[metadata.safeagents]\nrepository = "mathy"\n'
README = "# mathy\n"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    """Two tasks from one repository (``mathy.py``, ``README.md``, ``notes.txt``): one edits
    ``mathy.py``, the other also drops ``notes.txt`` and adds a binary file."""
    files = {"mathy.py": BROKEN, "README.md": README, "notes.txt": "notes\n"}
    write_task(tmp_path / "tasks" / "fix-a", toml=TOML, files=files)
    kept = {name: content for name, content in files.items() if name != "notes.txt"}
    write_task(tmp_path / "tasks" / "fix-b", toml=TOML, files=kept)
    (tmp_path / "tasks" / "fix-b" / "environment" / "workspace" / "blob.bin").write_bytes(b"\xff\0")
    (tmp_path / "tasks" / "fix-b" / "instruction.md").write_text("Fix it, b.")
    source = tmp_path / "repo"
    source.mkdir()
    for name, content in {"mathy.py": FIXED, "README.md": README, "notes.txt": "notes\n"}.items():
        (source / name).write_text(content)
    return tmp_path


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$SAFEAGENTS_TASKS_CACHE``: where bundles materialise by default."""
    monkeypatch.setenv("SAFEAGENTS_TASKS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def bundle(folders: Path) -> Path:
    pack_bundle(folders / "tasks", {"mathy": folders / "repo"}, folders / "bundle")
    return folders / "bundle"


def test_a_bundle_stores_the_source_once_and_each_task_as_its_difference(bundle: Path) -> None:
    stored = {**_tree(bundle), **read_store(bundle)}
    assert "store.tar.gz" in stored and not (bundle / "sources").exists()
    assert stored["sources/mathy/mathy.py"] == FIXED.encode()
    assert "shared/environment/Dockerfile" in stored and "shared/tests/test.sh" in stored
    delta_b = stored["tasks/fix-b/delta.toml"].decode()
    assert 'source = "mathy"' in delta_b and 'removed = ["notes.txt"]' in delta_b
    assert '"solution/mathy.py" = "sources/mathy/mathy.py"' in delta_b
    assert "-    return x * 2\n+    return x + 2\n" in stored["tasks/fix-a/workspace.diff"].decode()
    assert stored["tasks/fix-b/environment/workspace/blob.bin"] == b"\xff\0"  # not text: kept
    assert stored["tasks/fix-b/instruction.md"] == b"Fix it, b."
    assert not any(path.startswith("tasks/fix-a/environment") for path in stored)


def test_every_path_of_a_bundle_loads_the_materialised_tasks(
    bundle: Path, folders: Path, cache: Path
) -> None:
    built = materialize_bundle(bundle)
    assert built.parent.parent == cache
    for task in ("fix-a", "fix-b"):
        assert _tree(built / task) == _tree(folders / "tasks" / task)
    assert [t.id for t in load_tasks(bundle)] == ["fix-a", "fix-b"]
    assert [t.id for t in load_tasks(bundle / "tasks")] == ["fix-a", "fix-b"]
    assert [t.root for t in load_tasks(bundle / "tasks" / "fix-b")] == [built / "fix-b"]
    assert resolve_task_path(bundle / "sources") == bundle / "sources"
    originals = [folders / "tasks" / "fix-a", folders / "tasks" / "fix-b"]
    # a directory of datasets: the bundle among them stands for its task folders
    assert find_task_dirs(folders) == [built / "fix-a", built / "fix-b", *originals]


def test_materialising_is_cached_by_content_and_safe_to_race(bundle: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(4) as pool:
        built = set(pool.map(lambda _: materialize_bundle(bundle, cache), range(4)))
    assert len(built) == 1 and len(os.listdir(cache)) == 1  # no half-written copy is left
    first = built.pop()
    marker = first / "fix-a" / "marker"
    marker.write_text("reused")
    assert materialize_bundle(bundle, cache) == first and marker.exists()
    (bundle / "tasks" / "fix-a" / "instruction.md").write_text("Fix `double`, please.")
    again = materialize_bundle(bundle, cache)
    assert again != first and (again / "fix-a" / "instruction.md").read_text().endswith("please.")


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        (lambda b: (b / "tasks/fix-a/workspace.diff").write_text("nonsense\n"), "workspace.diff"),
        (
            lambda b: write_store(
                b / "store.tar.gz", {**read_store(b), "sources/mathy/mathy.py": b"changed\n"}
            ),
            "mathy.py: does not apply at line",
        ),
        (
            lambda b: (b / "tasks/fix-a/delta.toml").write_text(
                'source = "mathy"\n[files]\n"x" = "../../etc/passwd"\n'
            ),
            "is not a relative path inside the bundle",
        ),
        (
            lambda b: (b / "tasks/fix-a/delta.toml").write_text('source = "nope"\n'),
            "no source 'nope'",
        ),
        (lambda b: (b / "bundle.toml").write_text("format = 9\n"), "format 9, not 1"),
    ],
)
def test_a_broken_bundle_is_refused_naming_the_file(
    bundle: Path, breakage: object, message: str, cache: Path
) -> None:
    breakage(bundle)  # type: ignore[operator]
    with pytest.raises(TaskDirError, match=message):
        load_tasks(bundle)
    with pytest.raises(BundleError):
        materialize_bundle(bundle)
    assert not any(cache.glob("*/tasks"))


@pytest.mark.usefixtures("cache")
def test_validate_on_a_broken_bundle_reports_it_without_a_traceback(
    bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (bundle / "tasks" / "fix-a" / "workspace.diff").write_text("nonsense\n")
    assert main(["tasks", "validate", str(bundle), "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    assert "INVALID" in out and "workspace.diff" in out and "Traceback" not in out


@pytest.mark.usefixtures("cache")
def test_validate_on_a_bundle_validates_its_tasks(
    bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tasks", "validate", str(bundle / "tasks"), "--jobs", "1"]) == 0
    assert "2 valid, 0 invalid of 2" in capsys.readouterr().out


def test_the_pack_command_writes_a_bundle_and_refuses_bad_input(
    folders: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = folders / "packed"
    args = ["tasks", "pack", "--tasks", str(folders / "tasks"), "--out", str(out)]
    assert main([*args, "--repo", f"mathy={folders / 'repo'}"]) == 0
    assert "2 tasks in" in capsys.readouterr().out and (out / "bundle.toml").is_file()
    assert main([*args, "--repo", "mathy"]) == 2
    assert main([*args, "--repo", f"mathy={folders / 'missing'}"]) == 2
    assert "expected NAME=DIRECTORY" in capsys.readouterr().err
    assert main(["tasks", "pack", "--tasks", str(folders / "none"), "--out", str(out)]) == 1
    assert "Traceback" not in capsys.readouterr().err and not (out / "bundle.toml").exists()


def test_the_bundled_command_prints_the_suite_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tasks", "bundled", "--cache", str(tmp_path)]) == 0
    printed = Path(capsys.readouterr().out.strip())
    assert printed.parent.parent == tmp_path and len(find_task_dirs(printed)) >= 24


@pytest.mark.parametrize("module", ["_bundle", "_bundle_cli", "_diff", "_pack"])
def test_the_bundle_modules_export_what_they_define(module: str) -> None:
    loaded = importlib.import_module(f"trainer.tasks.{module}")
    assert loaded.__all__ == sorted(loaded.__all__, key=lambda name: (not name.isupper(), name))
    assert all(hasattr(loaded, name) for name in loaded.__all__)
