"""Helpers for the intercept tests (imported, not collected): mitmproxy's environment, a TLS
scripted model, ``safeagents intercept`` processes, and reading their store."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from safeagents._thread_server import ThreadedServer
from safeagents.scripted import Script, ScriptedModel, create_app
from safeagents.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "safeagents" / "proxy"))  # proxy_testkit's builders
VENV = ROOT / ".venv-intercept"
"""mitmproxy 11 pins h11 0.14, which the test extra's SDKs cannot share: it lives apart."""
_STAMP = ".safeagents-stamp"
_CERT_SCRIPT = """
import datetime, ipaddress, sys
from pathlib import Path
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

key = ec.generate_private_key(ec.SECP256R1())
name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
now = datetime.datetime.now(datetime.timezone.utc)
names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
cert = (
    x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
    .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(1))
    .not_valid_after(now + datetime.timedelta(7))
    .add_extension(x509.SubjectAlternativeName(names), critical=False)
    .sign(key, hashes.SHA256())
)
out = Path(sys.argv[1])
out.joinpath("cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
out.joinpath("key.pem").write_bytes(key.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
    serialization.NoEncryption()))
"""


def _has_mitmproxy(python: str) -> bool:
    probe = [python, "-c", "import mitmproxy, safeagents.intercept"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def intercept_python() -> str:
    """An interpreter with mitmproxy and safeagents: ``$SAFEAGENTS_INTERCEPT_PYTHON``, this
    one, or ``.venv-intercept`` (built here with ``pip install -e '.[intercept]'``)."""
    chosen = os.environ.get("SAFEAGENTS_INTERCEPT_PYTHON")
    if chosen:
        return chosen
    if _has_mitmproxy(sys.executable):
        return sys.executable
    python = VENV / "bin" / "python"
    stamp = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    lock_path = Path(tempfile.gettempdir()) / "safeagents-intercept-venv.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp_file = VENV / _STAMP
        current = stamp_file.read_text() if stamp_file.is_file() else ""
        if current != stamp or not _has_mitmproxy(str(python)):
            if not python.exists():
                subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
            install = [str(python), "-m", "pip", "install", "-q", "-e", f"{ROOT}[intercept]"]
            done = subprocess.run(install, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"cannot build {VENV}:\n{done.stdout}\n{done.stderr}")
            stamp_file.write_text(stamp)
    return str(python)


def make_certificate(python: str, directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1: ``(cert.pem, key.pem)``."""
    subprocess.run([python, "-c", _CERT_SCRIPT, str(directory)], check=True)
    return directory / "cert.pem", directory / "key.pem"


class TLSScriptedServer(ThreadedServer):
    """The scripted model over HTTPS on a loopback port, in a background thread."""

    label = "the TLS scripted model"

    def __init__(self, cert: Path, key: Path) -> None:
        self.model = ScriptedModel(Script.from_data([]))
        super().__init__(
            create_app(self.model),
            "127.0.0.1",
            0,
            lifespan="off",
            ssl_certfile=str(cert),
            ssl_keyfile=str(key),
        )

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.port}/v1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


StartIntercept = Callable[..., "Intercept"]
"""The ``start_intercept`` fixture: ``start(*flags)`` for ``safeagents intercept``."""


class Intercept:
    """A ``safeagents intercept`` process (mitmproxy) on a loopback port."""

    def __init__(self, python: str, directory: Path, *flags: str) -> None:
        self.port = free_port()
        self.store = directory / "safeagents.db"
        self.confdir = directory / "mitmproxy"
        self.log = directory / "intercept.log"
        command = [
            python,
            "-m",
            "safeagents.cli",
            "intercept",
            "--listen-port",
            str(self.port),
            "--store",
            str(self.store),
            "--confdir",
            str(self.confdir),
            "--ssl-insecure",
            "--log-level",
            "warn",
            *flags,
        ]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, cwd=directory
            )
        self._wait_ready()

    @property
    def proxy(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ca(self) -> Path:
        return self.confdir / "mitmproxy-ca-cert.pem"

    def ssl_context(self) -> ssl.SSLContext:
        """Trusts mitmproxy's CA, as a harness set up per the README would."""
        return ssl.create_default_context(cafile=str(self.ca))

    def _wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"safeagents intercept exited:\n{self.output()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                if self.ca.is_file():
                    return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"safeagents intercept did not start:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def session(self, session_id: str) -> dict[str, Any]:
        """The recorded session (as the admin API shows it) with its turns."""
        return asyncio.run(_read_session(str(self.store), session_id))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


async def _read_session(path: str, session_id: str) -> dict[str, Any]:
    store = SQLiteStore(path)
    try:
        record = await store.get_session(session_id)
        assert record is not None, f"no session {session_id!r} in {path}"
        document: dict[str, Any] = record.to_json()
        document["turns"] = [turn.to_json() for turn in await store.turns(session_id)]
        return document
    finally:
        await store.close()


def without_timestamps(content: bytes) -> bytes:
    """The scripted model stamps answers with the current second; nothing else varies."""
    return re.sub(rb'"(created|created_at)":\s*\d+', rb'"\1":0', content)
