import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from safeagents.scripted import Script, ScriptedServer


def test_binds_a_free_loopback_port_and_releases_it() -> None:
    server = ScriptedServer(Script.from_data([{"say": "hi"}]), model_names=("a", "b"))
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    with server:
        assert server.start() is server  # starting twice is harmless
        models = httpx.get(f"{server.base_url}/models").json()["data"]
        assert [model["id"] for model in models] == ["a", "b"]
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.base_url}/models")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", server.port))  # the port is free again


def test_two_servers_run_side_by_side() -> None:
    with (
        ScriptedServer(Script.from_data([{"say": "one"}])) as first,
        ScriptedServer(Script.from_data([{"say": "two"}])) as second,
    ):
        assert first.port != second.port
        body = {
            "model": "m",
            "messages": [],
            "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}],
        }
        texts = [
            httpx.post(f"{server.base_url}/chat/completions", json=body).json()["choices"][0][
                "message"
            ]["content"]
            for server in (first, second)
        ]
    assert texts == ["one", "two"]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_module_entry_point_serves_a_script_file(tmp_path: Path, stop: signal.Signals) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("- say: from a file\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "safeagents.scripted", str(script), "--model", "x"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        base_url = line.rsplit(" ", 1)[-1].strip()
        assert base_url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{base_url}/models").json()["data"][0]["id"] == "x"
        body = {
            "model": "x",
            "messages": [],
            "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}],
        }
        reply = httpx.post(f"{base_url}/chat/completions", json=body).json()
        assert reply["choices"][0]["message"]["content"] == "from a file"
    finally:
        process.send_signal(stop)
        try:
            code = process.wait(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()  # type: ignore[union-attr]
    assert code == 0
