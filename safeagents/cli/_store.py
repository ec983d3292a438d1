"""``safeagents store migrate``: copy a SQLite store into a PostgreSQL one."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from safeagents.cli._common import EXIT_OK, Parser, UsageError

__all__ = ["add_store", "store"]


def add_store(sub: argparse._SubParsersAction[Parser]) -> None:
    parser = sub.add_parser("store", help="manage transcript stores")
    actions = parser.add_subparsers(dest="action", required=True, parser_class=Parser)
    migrate = actions.add_parser(
        "migrate",
        help="copy a SQLite store into a PostgreSQL one; re-running finishes or updates a copy",
    )
    migrate.add_argument(
        "--from", dest="source", required=True, metavar="sqlite:PATH", help="the SQLite store"
    )
    migrate.add_argument(
        "--to", dest="target", required=True, metavar="postgresql://…", help="the database"
    )


def store(args: argparse.Namespace, out: Console, err: Console) -> int:
    import asyncio

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from safeagents.store import StoreError, copy_store, is_postgres, redacted, sqlite_path

    if is_postgres(args.source):
        raise UsageError("--from names a SQLite store (sqlite:PATH or PATH)")
    if not is_postgres(args.target):
        raise UsageError("--to names a PostgreSQL database (postgresql://user@host/db)")
    if not Path(sqlite_path(args.source)).is_file():
        raise UsageError(f"no SQLite store at {sqlite_path(args.source)}")
    with Progress(
        TextColumn("copying sessions"), BarColumn(), MofNCompleteColumn(), console=err
    ) as progress:
        task = progress.add_task("copy", total=None)

        def advanced(done: int, total: int, session_id: str) -> None:
            progress.update(task, completed=done, total=total)

        try:
            report = asyncio.run(copy_store(args.source, args.target, advanced))
        except StoreError as error:
            raise UsageError(str(error)) from None
    rows = ", ".join(f"{table} {have}" for table, (_, have) in report.counts.items())
    out.print(
        f"{report.sessions} sessions in {args.source}: {report.copied} copied, "
        f"{report.skipped} already there; {redacted(args.target)} holds the same rows "
        f"({rows})",
        highlight=False,
        soft_wrap=True,
    )
    return EXIT_OK
