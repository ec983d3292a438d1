"""Fixtures every test directory may use: a real PostgreSQL server (tests/postgres_kit.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from postgres_kit import PostgresServer, postgres_or_skip


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer(postgres_or_skip())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of an empty database of its own."""
    return postgres_server.database()
