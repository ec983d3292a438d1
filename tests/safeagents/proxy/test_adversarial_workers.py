"""Issue 11, item 12: ``serve --workers 2`` workers die with their supervisor, freeing the port."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc; empty elsewhere)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    return True


def _can_bind(port: int) -> bool:
    """Whether a new server could listen on ``port`` (uvicorn binds with SO_REUSEADDR)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_workers_end_when_their_supervisor_is_killed(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    command = [sys.executable, "-m", "safeagents.cli", "serve", "--upstream", "http://127.0.0.1:9"]
    command += ["--port", str(port), "--store", str(tmp_path / "s.db"), "--workers", "2"]
    log = tmp_path / "serve.log"
    with log.open("wb") as output:
        supervisor = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.TransportError):
                health = httpx.get(f"http://127.0.0.1:{port}/safeagents/v1/health", timeout=2)
                if health.status_code == 200:
                    break
            assert supervisor.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        workers = _children(supervisor.pid)
        assert len(workers) >= 2, workers
        supervisor.send_signal(signal.SIGKILL)
        supervisor.wait(5)
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.1)
        survivors = {pid for pid in workers if _alive(pid)}
        assert not survivors, f"workers outlived their supervisor: {survivors}"
        assert _can_bind(port), "the port is still taken"
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait(5)
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
