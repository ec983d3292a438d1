"""Writing a bundle (see :mod:`trainer.tasks._bundle`) from task folders and the repositories
they were generated from; the bundle is materialised again and compared with the folders,
byte for byte, before :func:`pack_bundle` returns."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from trainer.tasks._bundle import (
    BUNDLE_FILE,
    DELTA_FILE,
    DIFF_FILE,
    STORE_FILE,
    WORKSPACE,
    BundleError,
    bundle_files,
    materialize_bundle,
    write_store,
)
from trainer.tasks._diff import diff_text
from trainer.tasks._load import load_tasks

__all__ = ["PackResult", "pack_bundle"]

_WRITTEN = ("sources", "shared", STORE_FILE, "tasks", BUNDLE_FILE)


@dataclass(slots=True)
class PackResult:
    """What a bundle holds: its tasks, and its size against the task folders'."""

    tasks: int = 0
    bundle_bytes: int = 0
    folder_bytes: int = 0


@dataclass(slots=True)
class _Task:
    source: str | None
    removed: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    diff: str = ""
    own: dict[str, bytes] = field(default_factory=dict)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(path): (root / path).read_bytes() for path in bundle_files(root)}


def _text(content: bytes) -> str | None:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _split_workspace(task: _Task, files: dict[str, bytes], source: dict[str, bytes]) -> None:
    """The workspace's part of ``files`` as removals and a diff against ``source``."""
    prefix = f"{WORKSPACE}/"
    workspace = {p[len(prefix) :]: c for p, c in files.items() if p.startswith(prefix)}
    task.removed = sorted(set(source) - set(workspace))
    for path, content in sorted(workspace.items()):
        old = source.get(path)
        if old == content:
            continue
        old_text, new_text = _text(old or b""), _text(content)
        if old is None or old_text is None or new_text is None:
            task.own[prefix + path] = content
        else:
            task.diff += diff_text(path, old_text, new_text)
    for path in workspace:
        files.pop(prefix + path)


def _source_copies(files: dict[str, bytes], name: str, source: dict[str, bytes]) -> dict[str, str]:
    """Task files that are a file of the source word for word (the oracle's, the hidden
    tests'), preferring the source path the task path ends with."""
    by_content: dict[bytes, list[str]] = defaultdict(list)
    for path, content in source.items():
        by_content[content].append(path)
    copies = {}
    for path, content in files.items():
        candidates = by_content.get(content)
        if candidates:
            chosen = next((c for c in candidates if path.endswith(f"/{c}")), candidates[0])
            copies[path] = f"sources/{name}/{chosen}"
    return copies


def _shared_name(path: str, taken: set[str]) -> str:
    name, number = path, 1
    pure = PurePosixPath(path)
    while name in taken:
        number += 1
        name = str(pure.with_name(f"{pure.stem}-{number}{pure.suffix}"))
    taken.add(name)
    return name


def _toml(task: _Task) -> str:
    lines = [f"source = {json.dumps(task.source)}"] if task.source else []
    if task.removed:
        lines.append(f"removed = {json.dumps(task.removed)}")
    lines += ["", "[files]"] + [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in task.files.items()]
    return "\n".join(lines).lstrip("\n") + "\n"


def _write(path: Path, content: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)


def pack_bundle(tasks_dir: Path, sources: Mapping[str, Path], out: Path) -> PackResult:
    """Write the bundle of the task folders under ``tasks_dir`` into ``out`` (its
    ``bundle.toml``, ``store.tar.gz`` and ``tasks/`` replaced; other files kept).
    ``sources`` maps a repository name (a task's ``repository``) to the workspace tree its
    tasks started from."""
    loaded = load_tasks(tasks_dir)
    trees = {name: _tree(path) for name, path in sources.items()}
    packed: dict[str, _Task] = {}
    shared: dict[bytes, list[tuple[str, str]]] = defaultdict(list)
    result = PackResult(tasks=len(loaded))
    for task in sorted(loaded, key=lambda t: t.id):
        files = _tree(task.root)
        result.folder_bytes += sum(map(len, files.values()))
        name = task.config.metadata.safeagents.repository
        entry = _Task(name if name in trees else None)
        if entry.source is not None:
            _split_workspace(entry, files, trees[entry.source])
            entry.files = _source_copies(files, entry.source, trees[entry.source])
        for path, content in files.items():
            if path not in entry.files:
                shared[content].append((task.id, path))
        packed[task.id] = entry
    taken: set[str] = set()
    shared_files: dict[str, bytes] = {}
    for content, users in shared.items():
        if len({task_id for task_id, _ in users}) < 2:
            for task_id, path in users:
                packed[task_id].own[path] = content
            continue
        name = _shared_name(users[0][1], taken)
        shared_files[name] = content
        for task_id, path in users:
            packed[task_id].files[path] = f"shared/{name}"

    for name in _WRITTEN:
        target = out / name
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)
    _write(
        out / BUNDLE_FILE,
        "# Tasks stored as their difference from the store's sources/: see README.md\nformat = 1\n",
    )
    stored = {
        f"sources/{repo}/{path}": c for repo, tree in trees.items() for path, c in tree.items()
    }
    stored.update((f"shared/{name}", content) for name, content in shared_files.items())
    write_store(out / STORE_FILE, stored)
    for task_id, entry in packed.items():
        folder = out / "tasks" / task_id
        entry.files = dict(sorted(entry.files.items()))
        _write(folder / DELTA_FILE, _toml(entry))
        if entry.diff:
            _write(folder / DIFF_FILE, entry.diff)
        for path, content in entry.own.items():
            _write(folder / path, content)
    result.bundle_bytes = sum(len(c) for c in _tree(out).values())
    _check(out, {task.id: task.root for task in loaded})
    return result


def _check(bundle: Path, folders: Mapping[str, Path]) -> None:
    """The bundle materialises to exactly ``folders``."""
    with tempfile.TemporaryDirectory(prefix="safeagents-pack-check-") as cache:
        built = materialize_bundle(bundle, Path(cache))
        names = sorted(path.name for path in built.iterdir())
        if names != sorted(folders):
            raise BundleError(f"{bundle}: materialises to {names}, not {sorted(folders)}")
        for task_id, folder in folders.items():
            if _tree(built / task_id) != _tree(folder):
                raise BundleError(f"{bundle}: task {task_id} does not materialise to {folder}")
