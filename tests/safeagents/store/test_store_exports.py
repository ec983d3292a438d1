"""The store's public names, and psycopg loaded only for a PostgreSQL store."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

MODULES = (
    "safeagents.store",
    "safeagents.store.postgres",
    "safeagents.store._alias_start",
    "safeagents.store._copy",
    "safeagents.store._errors",
    "safeagents.store._location",
    "safeagents.store._open",
    "safeagents.store._rows",
    "safeagents.store.postgres._read",
    "safeagents.store.postgres._schema",
    "safeagents.store.postgres._store",
    "safeagents.store.postgres._write",
)


@pytest.mark.parametrize("name", MODULES)
def test_all_lists_names_the_module_has(name: str) -> None:
    module = importlib.import_module(name)
    assert len(set(module.__all__)) == len(module.__all__)
    for member in module.__all__:
        assert getattr(module, member) is not None, member
    if "._" not in name:  # a package's __all__ is exactly its public names
        public = {
            member
            for member in dir(module)
            if not member.startswith("_") and member not in ("annotations", "postgres")
        }
        assert sorted(module.__all__) == sorted(public)


def test_a_sqlite_store_never_loads_psycopg() -> None:
    code = (
        "import sys, safeagents.store as s; s.open_store(':memory:'); "
        "print(any(m.startswith('psycopg') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_locations_name_their_backend_and_hide_passwords() -> None:
    from safeagents.store import is_postgres, redacted, sqlite_path

    assert is_postgres("postgresql://u@h/db") and is_postgres("postgres://h/db")
    assert not is_postgres("runs/s.db") and not is_postgres("sqlite:runs/s.db")
    assert sqlite_path("sqlite:runs/s.db") == "runs/s.db"
    assert sqlite_path("sqlite:///abs/s.db") == "/abs/s.db"
    assert sqlite_path("runs/s.db") == "runs/s.db"
    assert redacted("postgresql://u:pw@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redacted("postgresql://u@h/db") == "postgresql://u@h/db"
    assert redacted("runs/s.db") == "runs/s.db"
