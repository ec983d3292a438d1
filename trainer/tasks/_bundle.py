"""Task bundles: many tasks generated from a few repositories, stored compactly, and turned
back into Harbor task folders on demand.

A bundle is a directory with ``bundle.toml`` in it::

    <bundle>/bundle.toml            marks the bundle (``format = 1``)
    <bundle>/store.tar.gz           what tasks share, third-party code kept out of the tree:
        sources/<repo>/...          each repository's workspace, once
        shared/...                  files several tasks have word for word
    <bundle>/tasks/<id>/delta.toml  ``source`` (a ``sources/`` name), ``removed`` (workspace
                                    files left out) and ``[files]``: a task file -> the store
                                    file it is a copy of (``sources/...`` or ``shared/...``)
    <bundle>/tasks/<id>/workspace.diff  the workspace's edits, a unified diff against its source
    <bundle>/tasks/<id>/...         the task's own files, at their place in the task
                                    (``task.toml``, ``instruction.md``, ``tests/spec.json``, ...)

:func:`materialize_bundle` writes the task folders once per bundle content into a cache
(``$SAFEAGENTS_TASKS_CACHE``, else ``~/.cache/safeagents/tasks``) and returns their directory;
:func:`resolve_task_path` maps a path inside a bundle (the bundle, its ``tasks/`` or one task)
to the same place among them, so the loader takes a bundle wherever it takes tasks.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from trainer.tasks._diff import DiffError, apply_diff

__all__ = [
    "BUNDLE_FILE",
    "CACHE_ENV",
    "DELTA_FILE",
    "DIFF_FILE",
    "STORE_FILE",
    "WORKSPACE",
    "BundleError",
    "bundle_files",
    "bundled_tasks_path",
    "default_cache",
    "is_bundle",
    "materialize_bundle",
    "read_store",
    "resolve_task_path",
    "write_store",
]

BUNDLE_FILE = "bundle.toml"
DELTA_FILE = "delta.toml"
DIFF_FILE = "workspace.diff"
STORE_FILE = "store.tar.gz"
CACHE_ENV = "SAFEAGENTS_TASKS_CACHE"
WORKSPACE = PurePosixPath("environment/workspace")
_FORMAT = 1


class BundleError(ValueError):
    """A bundle that cannot be turned into tasks; the message names the file."""


def is_bundle(path: Path) -> bool:
    return (path / BUNDLE_FILE).is_file()


def default_cache() -> Path:
    """``$SAFEAGENTS_TASKS_CACHE``, else ``$XDG_CACHE_HOME/safeagents/tasks`` (``~/.cache``)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "safeagents" / "tasks"


def bundled_tasks_path(cache: Path | None = None) -> Path:
    """The bundled suite's task folders (``bundled-tasks/`` of a checkout, else the copy
    inside the installed package), materialised in ``cache`` when needed."""
    package = Path(__file__).resolve().parents[1]  # trainer/
    checkout = package.parent / "bundled-tasks"
    if is_bundle(checkout) and (package.parent / "pyproject.toml").is_file():
        return materialize_bundle(checkout, cache)
    return materialize_bundle(package / "_bundled_tasks", cache)


def bundle_files(root: Path) -> Iterator[PurePosixPath]:
    """Every file of the directory ``root``, relative to it, sorted; links are refused."""
    for directory, names, files in os.walk(root):
        names.sort()
        for name in sorted(files):
            path = Path(directory, name)
            if path.is_symlink():
                raise BundleError(f"{path}: a link (a bundle holds plain files)")
            yield PurePosixPath(path.relative_to(root).as_posix())


def _digest(root: Path) -> str:
    digest = hashlib.sha256()
    for relative in bundle_files(root):
        content = (root / relative).read_bytes()
        digest.update(f"{relative}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()[:16]


def read_store(root: Path) -> dict[str, bytes]:
    """The files of the bundle's store (path inside it -> content); none without one."""
    path = root / STORE_FILE
    if not path.is_file():
        return {}
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(path, "r:gz") as archive:
            for member in archive:
                name = member.name
                _inside(root, name, path)
                extracted = archive.extractfile(member) if member.isfile() else None
                if extracted is None:
                    raise BundleError(f"{path}: {name!r} is not a plain file")
                files[name] = extracted.read()
    except (OSError, EOFError, tarfile.TarError) as problem:
        raise BundleError(f"{path}: {problem}") from None
    return files


def write_store(path: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` as a bundle store: the same files give the same bytes (sorted, no
    times, owners or modes of the machine)."""
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as compressed,
        tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive,
    ):
        for name in sorted(files):
            member = tarfile.TarInfo(name)
            member.size, member.mode = len(files[name]), 0o644
            archive.addfile(member, io.BytesIO(files[name]))
    path.write_bytes(buffer.getvalue())


def resolve_task_path(path: Path) -> Path:
    """``path`` among the materialised tasks when it is a bundle, its ``tasks/`` or a task of
    it; else ``path`` itself."""
    for depth, ancestor in enumerate((path, path.parent, path.parent.parent)):
        if not is_bundle(ancestor):
            continue
        inside = path.relative_to(ancestor).parts if depth else ()
        if inside and inside[0] != "tasks":
            return path
        return materialize_bundle(ancestor).joinpath(*inside[1:])
    return path


def materialize_bundle(root: Path, cache: Path | None = None) -> Path:
    """The directory of ``root``'s task folders, written into ``cache`` unless this content
    of the bundle already is; concurrent callers each get the one complete copy."""
    root = Path(root)
    try:
        config = tomllib.loads((root / BUNDLE_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as problem:
        raise BundleError(f"{root / BUNDLE_FILE}: {problem}") from None
    if config.get("format") != _FORMAT:
        raise BundleError(f"{root / BUNDLE_FILE}: format {config.get('format')!r}, not {_FORMAT}")
    try:
        final = (cache or default_cache()) / f"{root.resolve().name}-{_digest(root)}"
        if not (final / "tasks").is_dir():
            final.parent.mkdir(parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
            try:
                store = read_store(root)
                for task in sorted((root / "tasks").iterdir()):
                    if task.is_dir():
                        _write_task(store, task, scratch / "tasks" / task.name)
                os.rename(scratch, final)
            except OSError:
                if not (final / "tasks").is_dir():  # else another caller finished first
                    raise
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    except OSError as problem:
        raise BundleError(f"{root}: cannot materialise its tasks: {problem}") from None
    return final / "tasks"


def _delta(task: Path) -> dict[str, Any]:
    path = task / DELTA_FILE
    try:
        delta = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as problem:
        raise BundleError(f"{path}: {problem}") from None
    files, removed = delta.get("files", {}), delta.get("removed", [])
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise BundleError(f"{path}: [files] maps task paths to bundle paths")
    if not isinstance(removed, list) or not all(isinstance(v, str) for v in removed):
        raise BundleError(f"{path}: removed is a list of workspace paths")
    if not isinstance(delta.get("source", ""), str):
        raise BundleError(f"{path}: source names a directory of sources/")
    return delta


def _inside(base: Path, relative: str, what: Path) -> Path:
    """``base / relative``, refused when ``relative`` leaves ``base``."""
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise BundleError(f"{what}: {relative!r} is not a relative path inside the bundle")
    return base.joinpath(*parts)


def _write_task(store: Mapping[str, bytes], task: Path, out: Path) -> None:
    delta = _delta(task)
    workspace = out / WORKSPACE
    source_name = delta.get("source")
    if source_name:
        prefix = f"{_inside(Path('sources'), source_name, task / DELTA_FILE).as_posix()}/"
        source = {name[len(prefix) :]: c for name, c in store.items() if name.startswith(prefix)}
        if not source:
            raise BundleError(f"{task / DELTA_FILE}: no source {source_name!r} in the bundle")
        removed = set(delta.get("removed", []))
        for name, content in source.items():
            if name not in removed:
                _put(content, workspace / name)
    diff = task / DIFF_FILE
    if diff.is_file():
        _patch(workspace, diff)
    files: Mapping[str, str] = delta.get("files", {})
    for target, origin in files.items():
        _inside(Path(), origin, task / DELTA_FILE)
        if origin not in store:
            raise BundleError(f"{task / DELTA_FILE}: {origin!r} is not a file of the bundle")
        _put(store[origin], _inside(out, target, task / DELTA_FILE))
    for relative in bundle_files(task):
        if str(relative) not in (DELTA_FILE, DIFF_FILE):
            _put((task / relative).read_bytes(), out / relative)


def _patch(workspace: Path, diff: Path) -> None:
    def read(relative: str) -> str:
        path = _inside(workspace, relative, diff)
        if not path.is_file():
            raise BundleError(f"{diff}: {relative!r} is not a file of the workspace")
        return path.read_text(encoding="utf-8")

    try:
        changed = apply_diff(diff.read_text(encoding="utf-8"), read)
    except (DiffError, UnicodeDecodeError) as problem:
        raise BundleError(f"{diff}: {problem}") from None
    for relative, content in changed.items():
        path = _inside(workspace, relative, diff)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as handle:
            handle.write(content)


def _put(content: bytes, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
