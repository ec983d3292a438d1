"""The local sandbox's escapes fail closed: the hidden tests, another rollout, the network,
surviving the rollout; and its limits end what exceeds them."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from sandbox_kit import HIDDEN_MARK, make_task, require_sandbox

from trainer.sandbox import (
    AGENT_LIMITS,
    ExecResult,
    Limits,
    LocalBackend,
    LocalSandbox,
    ProxyAccess,
    SandboxError,
)

# the system and this Python: read-only host directories that hold no task
SKIPPED = " ".join(
    f"--exclude-dir={name}"
    for name in ("proc", "sys", "dev", "usr", "etc", Path(sys.prefix).name, ".pyenv")
)
ENV = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": "/tmp"}


class _Echo(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        reply = f"{self.command} {self.path} {len(body)}".encode()
        self.send_response(200)
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    do_GET = do_POST = _answer

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def echo() -> Iterator[ThreadingHTTPServer]:
    """A stand-in proxy on a loopback port that answers with the method and path it got."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def backend(tmp_path: Path) -> LocalBackend:
    return require_sandbox(tmp_path / "sandboxes")


def run(sandbox: LocalSandbox, script: str, **options: object) -> ExecResult:
    return asyncio.run(sandbox.exec(["bash", "-c", script], env=ENV, **options))  # type: ignore[arg-type]


def new_sandbox(backend: LocalBackend, workspace: Path, rollout: str) -> LocalSandbox:
    return asyncio.run(backend.create(workspace, workdir="/workspace", rollout_id=rollout))


def test_the_hidden_tests_appear_only_when_added_after_the_agent(
    backend: LocalBackend, tmp_path: Path
) -> None:
    task = make_task(tmp_path / "tasks")
    sandbox = new_sandbox(backend, task.workspace, "r1")
    probe = (
        f"ls {task.tests_dir} {task.root} {tmp_path} /tests 2>&1; "
        f"grep -rl '{HIDDEN_MARK}' / {SKIPPED} 2>/dev/null; "
        "id -u; pwd"
    )
    agent = run(sandbox, probe)
    assert agent.stdout.count("No such file or directory") == 4
    assert "test_calc.py" not in agent.stdout and "solution" not in agent.stdout
    assert agent.stdout.splitlines()[-2:] == ["1000", "/workspace"]
    asyncio.run(sandbox.add(task.tests_dir, "/tests"))
    verifier = run(sandbox, "cat /tests/test_calc.py; echo tamper > /tests/test_calc.py")
    assert HIDDEN_MARK in verifier.stdout
    assert "Read-only file system" in verifier.stderr  # the tests cannot be edited either
    assert "tamper" not in (task.tests_dir / "test_calc.py").read_text()
    asyncio.run(sandbox.close())
    assert sandbox.directory is not None and not sandbox.directory.exists()


def test_a_rollout_cannot_reach_another_rollouts_workspace(
    backend: LocalBackend, tmp_path: Path
) -> None:
    task = make_task(tmp_path / "tasks")
    first = new_sandbox(backend, task.workspace, "a")
    second = new_sandbox(backend, task.workspace, "b")
    (second.workspace / "secret.txt").write_text("b's work")
    assert (first.workspace / "calc.py").is_file()
    probe = f"cat {second.workspace}/secret.txt; ls {backend.root}; echo mine > calc.py"
    result = run(first, probe)
    assert result.returncode == 0
    assert "b's work" not in result.stdout
    assert result.stderr.count("No such file or directory") == 2
    assert (first.workspace / "calc.py").read_text() == "mine\n"  # its own copy, written
    assert (second.workspace / "calc.py").read_text() == (task.workspace / "calc.py").read_text()
    assert "return a - b" in (task.workspace / "calc.py").read_text()  # the task is untouched
    for sandbox in (first, second):
        asyncio.run(sandbox.close())


def test_the_system_is_read_only_and_the_agent_has_no_privilege(
    backend: LocalBackend, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandbox = new_sandbox(backend, workspace, "ro")
    venv = Path(sys.prefix)
    result = run(
        sandbox,
        f"touch /usr/x; touch {venv}/x; touch /etc/x; grep CapEff /proc/self/status; "
        "ls /proc | grep -c '^[0-9]'",
    )
    assert result.stderr.count("Read-only file system") == 3
    assert "CapEff:\t0000000000000000" in result.stdout
    assert int(result.stdout.split()[-1]) <= 5  # its own pid namespace: init, relay, bash, ls, grep
    assert not (venv / "x").exists()
    asyncio.run(sandbox.close())


def test_only_the_sessions_path_on_the_proxy_is_reachable(
    backend: LocalBackend, tmp_path: Path, echo: ThreadingHTTPServer
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    port = echo.server_address[1]
    other = socket.create_server(("127.0.0.1", 0))  # a host service that is not the proxy
    sandbox = new_sandbox(backend, workspace, "net")
    client = f"""
import socket, urllib.request, urllib.error
def get(path, method="GET"):
    request = urllib.request.Request(f"http://127.0.0.1:{port}" + path, method=method,
                                     data=b"x" if method == "POST" else None)
    try:
        return urllib.request.urlopen(request, timeout=10).read().decode()
    except urllib.error.HTTPError as error:
        return str(error.code)
print(get("/s/mine/v1/models"))
print(get("/s/mine/v1/chat/completions", "POST"))
print(get("/safeagents/v1/sessions/mine/outcome", "POST"))
print(get("/s/other/v1/models"))
print(get("/s/mine/../../safeagents/v1/sessions"))
print(get("/s/mine/%2e%2e/%2e%2e/safeagents/v1/sessions"))
for address in (("127.0.0.1", {other.getsockname()[1]}), ("1.1.1.1", 53), ("10.0.0.1", 80)):
    try:
        socket.create_connection(address, timeout=3)
        print("connected", address)
    except OSError as error:
        print("refused", type(error).__name__)
"""
    try:
        result = asyncio.run(
            sandbox.exec(
                ["python", "-c", client],
                env=ENV,
                proxy=ProxyAccess(host="127.0.0.1", port=port, session_id="mine"),
            )
        )
    finally:
        other.close()
    lines = result.stdout.splitlines()
    assert lines[:6] == [
        "GET /s/mine/v1/models 0",
        "POST /s/mine/v1/chat/completions 1",
        "403",
        "403",
        "403",
        "403",
    ], result.stderr
    assert lines[6:] == ["refused ConnectionRefusedError", *["refused OSError"] * 2]
    assert result.steps == 1 and len(result.refused) == 4
    without = run(
        sandbox, f"python -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'"
    )
    assert without.returncode != 0 and "ConnectionRefusedError" in without.stderr
    asyncio.run(sandbox.close())


def _alive(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("ending", ["exits", "times out"])
def test_no_process_survives_the_command(
    backend: LocalBackend, tmp_path: Path, ending: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandbox = new_sandbox(backend, workspace, "daemon")
    marker = "313.37" if ending == "exits" else "314.15"
    then = "exit 0" if ending == "exits" else "sleep 60"
    script = f"setsid nohup sleep {marker} >/dev/null 2>&1 & disown; sleep 0.3; {then}"
    result = run(sandbox, script, limits=Limits(wall_seconds=2.0))
    assert result.timed_out is (ending == "times out")
    assert result.returncode == (0 if ending == "exits" else None)
    assert _alive(f"sleep\x00{marker}") == []
    asyncio.run(sandbox.close())


def test_cpu_memory_and_file_limits_end_what_exceeds_them(
    backend: LocalBackend, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandbox = new_sandbox(backend, workspace, "limits")
    tight = Limits(cpu_seconds=1, memory_bytes=256 * 1024**2, file_bytes=1024**2)
    spin = run(sandbox, "exec python -c 'while True: pass'", limits=tight)
    assert spin.returncode == 128 + 24 and spin.seconds < 10  # SIGXCPU
    hog = run(sandbox, "exec python -c 'x = bytearray(512 * 1024**2)'", limits=tight)
    assert hog.returncode == 1 and "MemoryError" in hog.stderr
    big = run(sandbox, "head -c 2000000 /dev/zero > big", limits=tight)
    assert big.returncode != 0 and (sandbox.workspace / "big").stat().st_size <= 1024**2
    fine = run(sandbox, "python -c 'x = bytearray(64 * 1024**2)'", limits=tight)
    assert fine.returncode == 0
    asyncio.run(sandbox.close())


def test_the_step_limit_ends_the_command_at_the_next_model_request(
    backend: LocalBackend, tmp_path: Path, echo: ThreadingHTTPServer
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandbox = new_sandbox(backend, workspace, "steps")
    port = echo.server_address[1]
    url = f"http://127.0.0.1:{port}/s/s1/v1/chat/completions"
    post = f"import urllib.request as u; u.urlopen(u.Request('{url}', data=b'x'))"
    script = f'for i in 1 2 3 4 5; do python -c "{post}"; done; sleep 30'
    result = asyncio.run(
        sandbox.exec(
            ["bash", "-c", script],
            env=ENV,
            limits=Limits(agent_steps=2, wall_seconds=20),
            proxy=ProxyAccess(host="127.0.0.1", port=port, session_id="s1"),
        )
    )
    assert result.step_limit and not result.timed_out and result.returncode is None
    assert result.steps == 2 and result.seconds < 15
    asyncio.run(sandbox.close())


def test_reading_a_file_back_never_follows_a_link_out(
    backend: LocalBackend, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("host secret")
    sandbox = new_sandbox(backend, workspace, "links")
    run(sandbox, f"echo 0.5 > reward.txt; ln -s {outside} leak.txt; ln -s /etc/hostname host")
    assert asyncio.run(sandbox.read("/workspace/reward.txt")) == b"0.5\n"
    assert asyncio.run(sandbox.read("/workspace/leak.txt")) is None
    assert asyncio.run(sandbox.read("/workspace/host")) is None
    assert asyncio.run(sandbox.read("/etc/passwd")) is None  # not the sandbox's to give
    asyncio.run(sandbox.close())


def test_a_broken_sandbox_is_a_sandbox_error(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="cannot make a sandbox"):
        LocalBackend(tmp_path / "s", bwrap="/bin/false").check()
    with pytest.raises(SandboxError, match="inside an exposed directory"):
        LocalBackend(Path(sys.prefix) / "sandboxes")
    backend = require_sandbox(tmp_path / "sandboxes")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with pytest.raises(SandboxError, match="absolute"):
        asyncio.run(backend.create(workspace, workdir="relative", rollout_id="x"))
    with pytest.raises(SandboxError, match="copying the workspace"):
        asyncio.run(backend.create(tmp_path / "missing", workdir="/w", rollout_id="x"))
    sandbox = new_sandbox(backend, workspace, "x")
    with pytest.raises(SandboxError, match="not a directory"):
        asyncio.run(sandbox.add(tmp_path / "missing", "/tests"))
    gone = tmp_path / "gone"
    gone.mkdir()
    asyncio.run(sandbox.add(gone, "/data"))
    gone.rmdir()
    with pytest.raises(SandboxError, match="bubblewrap failed"):
        run(sandbox, "true")
    asyncio.run(sandbox.close())
    with pytest.raises(SandboxError, match="closed"):
        run(sandbox, "true")
    assert AGENT_LIMITS.agent_steps == 30 and AGENT_LIMITS.wall_seconds == 1200
    assert os.environ.get("SAFEAGENTS_FAKE") is None
