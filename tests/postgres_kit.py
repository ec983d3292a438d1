"""A real PostgreSQL server for the tests: ``initdb`` on a temporary data directory, started
with ``pg_ctl`` on a free port as a user without root rights (``postgres``, created if need
be, when the tests run as root).

Skipped when the server binaries (Debian: ``apt-get install postgresql``) or psycopg are
missing, unless ``SAFEAGENTS_REQUIRE_POSTGRES=1`` (set by scripts/test): then that fails.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

__all__ = ["PostgresServer", "find_binaries", "postgres_or_skip"]

_USER = "postgres"


def find_binaries() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl`` (the newest installed version)."""
    named = os.environ.get("SAFEAGENTS_POSTGRES_BIN")
    candidates = [named] if named else []
    candidates += sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True
    )
    on_path = shutil.which("initdb")
    candidates += [str(Path(on_path).parent)] if on_path else []
    for candidate in candidates:
        if (Path(candidate) / "initdb").is_file() and (Path(candidate) / "pg_ctl").is_file():
            return Path(candidate)
    return None


def postgres_or_skip() -> Path:
    """The binaries' directory, or skip (fail where ``SAFEAGENTS_REQUIRE_POSTGRES=1``)."""
    reason = ""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        reason = "psycopg is not installed (pip install -e '.[postgres]')"
    binaries = find_binaries()
    if binaries is None:
        reason = "PostgreSQL's initdb/pg_ctl not found (Debian: apt-get install postgresql)"
    if reason:
        if os.environ.get("SAFEAGENTS_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"SAFEAGENTS_REQUIRE_POSTGRES=1 but {reason}")
        pytest.skip(reason)
    assert binaries is not None
    return binaries


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _unprivileged_user() -> str | None:
    """The user the server runs as when we are root (created when missing); ``None`` when
    we are not root (the server runs as us)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", _USER],
            check=True,
        )
    return _USER


class PostgresServer:
    """One server on ``127.0.0.1:port`` (trust authentication); :meth:`database` makes an
    empty database per test and returns its URL."""

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.user = _unprivileged_user()
        self.root = Path(tempfile.mkdtemp(prefix="safeagents-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        if self.user is not None:
            shutil.chown(self.root, self.user)
        self.root.chmod(0o700)

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", self.user, "--"] if self.user is not None else []
        done = subprocess.run(
            [*prefix, *command], capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stdout}{done.stderr}")

    def start(self) -> None:
        self._run(
            str(self.binaries / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c full_page_writes=off -c max_connections=200"
        )
        log = self.root / "server.log"
        self._run(
            str(self.binaries / "pg_ctl"), "-D", str(self.data), "-l", str(log),
            "-o", options, "-w", "-t", "60", "start",
        )  # fmt: skip

    def stop(self) -> None:
        try:
            self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """A new empty database's URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return self.url(name)
