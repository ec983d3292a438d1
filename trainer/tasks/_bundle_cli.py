"""``safeagents tasks bundled`` (where the bundled suite's task folders are) and
``safeagents tasks pack`` (task folders and their repositories into a bundle)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from trainer.tasks._bundle import BUNDLE_FILE, BundleError, bundled_tasks_path
from trainer.tasks._load import TaskDirError
from trainer.tasks._pack import pack_bundle
from trainer.tasks._repo import copy_repository

__all__ = ["add_bundle_commands"]

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def add_bundle_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """``bundled`` and ``pack``, on the ``tasks`` subparsers."""
    bundled = sub.add_parser(
        "bundled", help="print the bundled suite's directory (materialised when needed)"
    )
    bundled.add_argument(
        "--cache", metavar="DIR", help="where task folders are materialised "
        "(default: $SAFEAGENTS_TASKS_CACHE, else ~/.cache/safeagents/tasks)",
    )  # fmt: skip
    bundled.set_defaults(run=run_bundled)
    pack = sub.add_parser(
        "pack", help="store task folders as their difference from the repositories they came from"
    )
    pack.add_argument("--tasks", required=True, metavar="DIR", help="the task folders")
    pack.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a repository the tasks name as their repository (repeatable)",
    )
    pack.add_argument("--out", required=True, metavar="DIR", help="the bundle written")
    pack.set_defaults(run=run_pack)


def run_bundled(args: argparse.Namespace, out: Console, err: Console) -> int:
    try:
        path = bundled_tasks_path(Path(args.cache) if args.cache else None)
    except BundleError as problem:
        err.print(f"[red]error:[/] {escape(str(problem))}", soft_wrap=True)
        return EXIT_INVALID
    out.print(str(path), markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def run_pack(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Exit 0 when the bundle was written and materialises to the folders, 1 when it
    cannot be, 2 on usage."""
    repos: dict[str, Path] = {}
    for entry in args.repo:
        name, _, path = entry.partition("=")
        if not name or not path or not Path(path).is_dir():
            err.print(f"[red]error:[/] --repo {escape(entry)}: expected NAME=DIRECTORY")
            return EXIT_USAGE
        repos[name] = Path(path)
    with tempfile.TemporaryDirectory(prefix="safeagents-pack-") as scratch:
        sources = {name: copy_repository(path, Path(scratch, name)) for name, path in repos.items()}
        try:
            result = pack_bundle(Path(args.tasks), sources, Path(args.out))
        except (BundleError, TaskDirError, OSError) as problem:
            (Path(args.out) / BUNDLE_FILE).unlink(missing_ok=True)  # not a bundle, then
            err.print(f"[red]error:[/] {escape(str(problem))}", soft_wrap=True)
            return EXIT_INVALID
    out.print(
        f"{result.tasks} tasks in {escape(args.out)}: {result.bundle_bytes:,} bytes "
        f"(the task folders: {result.folder_bytes:,})",
        highlight=False,
    )
    return EXIT_OK
