"""What a store location says: a SQLite file (``PATH``, ``sqlite:PATH``) or a PostgreSQL
database (``postgresql://user:password@host:port/db``), and how to show it without secrets."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

__all__ = ["is_postgres", "redacted", "sqlite_path"]

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres(location: str | Path) -> bool:
    return str(location).startswith(_POSTGRES_SCHEMES)


def sqlite_path(location: str | Path) -> str:
    """The file a SQLite location names (``sqlite:`` stripped)."""
    return str(location).removeprefix("sqlite://").removeprefix("sqlite:")


def redacted(location: str | Path) -> str:
    """``location`` with the password of a URL replaced by ``***``, for messages and logs."""
    text = str(location)
    if not is_postgres(text):
        return text
    try:
        parts = urlsplit(text)
        password = parts.password
    except ValueError:
        return "(an invalid PostgreSQL URL)"
    if password is None:
        return text
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
