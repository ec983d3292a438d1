"""``safeagents ui``: the console for a store, as a real process on a real port."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from safeagents.cli import main
from safeagents.store import SessionUpdate, SQLiteStore


def _store(path: Path) -> Path:
    async def fill() -> None:
        store = SQLiteStore(path)
        await store.record_exchange(SessionUpdate("copied-1", "pi", "chat", "/w", "m", "r"), [])
        await store.close()

    asyncio.run(fill())
    return path


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--store", "missing.db"], "no store at"),
        (["--host", "0.0.0.0"], "beyond loopback"),
        (["--runs", "no-such-dir"], "--runs: no directory"),
    ],
)
def test_usage_errors(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    says: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SAFEAGENTS_ADMIN_TOKEN", raising=False)
    _store(tmp_path / "safeagents.db")
    assert main(["ui", *extra]) == 2
    assert says in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_serves_the_console_for_a_copied_store(tmp_path: Path) -> None:
    store = _store(tmp_path / "copied.db")
    port = _free_port()
    env = {**os.environ, "SAFEAGENTS_ADMIN_TOKEN": "tok"}
    command = [sys.executable, "-m", "safeagents.cli", "ui", "--store", str(store)]
    process = subprocess.Popen(
        [*command, "--port", str(port)], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                refused = httpx.get(f"{url}/ui/")
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
        assert refused.status_code == 401  # a token was given: loopback or not, it is asked
        page = httpx.get(f"{url}/ui/", headers={"Authorization": "Bearer tok"})
        assert page.status_code == 200 and 'id="session-copied-1"' in page.text
        assert httpx.get(url, follow_redirects=False).headers["location"] == "/ui/"
        events = f"{url}/ui/events"
        with httpx.stream("GET", events, headers={"Authorization": "Bearer tok"}) as response:
            chunks = response.iter_raw()
            assert next(chunks).startswith(b"retry:")
            started = time.monotonic()
            process.terminate()  # SIGTERM, as a service manager stops it: an open tab
            process.wait(timeout=30)  # does not hold the shutdown
            stopped = time.monotonic() - started
            b"".join(chunks)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/ui/" in err
    assert stopped < 2.0, f"safeagents ui took {stopped:.2f} s to stop with a tab open"
    assert "ERROR" not in err and "Traceback" not in err, err


def test_serve_checks_its_console_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["serve", "--upstream", "http://127.0.0.1:9/", "--runs", "no-such-dir"]) == 2
    assert "--runs: no directory no-such-dir" in capsys.readouterr().err
