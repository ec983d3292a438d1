"""The store contract runs on every backend: ``open_backend(name)`` opens the store called
``name`` (a second call with the same name: another process or instance on the same store)."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_kit import OpenBackend

from safeagents.store import SQLiteStore, Store


@pytest.fixture(params=["sqlite", "postgres"])
def open_backend(request: pytest.FixtureRequest, tmp_path: Path) -> OpenBackend:
    if request.param == "sqlite":
        return lambda name: SQLiteStore(tmp_path / "nested" / f"{name}.db")  # parents made
    from safeagents.store.postgres import PostgresStore

    server = request.getfixturevalue("postgres_server")
    urls: dict[str, str] = {}

    def open_postgres(name: str) -> Store:
        if name not in urls:
            urls[name] = server.database()
        return PostgresStore(urls[name])

    return open_postgres
