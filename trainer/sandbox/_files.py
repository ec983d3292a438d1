"""Workspace copies and their removal."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["copy_tree", "remove_tree"]


def copy_tree(source: Path, target: Path) -> None:
    """A private copy of ``source`` at ``target`` (links kept; shared blocks where the file
    system can clone them, a plain copy elsewhere)."""
    if shutil.which("cp") is None:  # pragma: no cover - every Linux has cp
        shutil.copytree(source, target, symlinks=True)
        return
    done = subprocess.run(
        ["cp", "-a", "--reflink=auto", "--", str(source), str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise OSError(f"copying {source} to {target}: {done.stderr.strip()}")


def remove_tree(path: Path) -> None:
    """``rm -r`` that also clears read-only files and directories (module caches, .git)."""

    def make_writable(function: Callable[..., Any], target: str, _: Any) -> None:
        parent = os.path.dirname(target)
        for entry in (parent, target):
            if os.path.lexists(entry) and not os.path.islink(entry):
                os.chmod(entry, os.stat(entry).st_mode | stat.S_IWUSR | stat.S_IXUSR)
        function(target)

    if path.exists():
        shutil.rmtree(path, onerror=make_writable)
