"""The systems under test: how each is started (pinned with ``taskset``), found ready, sized
(RSS of its process tree) and stopped; and the LiteLLM environment, built on first use."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.proxy.payloads import ARGUMENT_SIZES, Scenario, request_body

__all__ = [
    "LITELLM_KEY",
    "LITELLM_VERSION",
    "Running",
    "SystemSpec",
    "ensure_litellm",
    "free_port",
    "litellm_version",
    "pinned",
    "start_system",
    "tree_memory",
]

REPO = Path(__file__).resolve().parents[2]
LITELLM_VERSION = "1.108.7"
LITELLM_VENV = REPO / "bench" / ".venvs" / "litellm"
LITELLM_KEY = "sk-bench-master"


@dataclass(frozen=True, slots=True)
class SystemSpec:
    """``kind`` is direct, safeagents or litellm; ``rules`` are ``--rules`` paths."""

    name: str
    kind: str
    rules: tuple[str, ...] = ()
    workers: int = 1
    cores: str = "0"
    label: str = ""

    @property
    def headers(self) -> tuple[tuple[str, str], ...]:
        if self.kind == "litellm":
            return (("authorization", f"Bearer {LITELLM_KEY}"),)
        return (("authorization", "Bearer sk-upstream-key"),)


@dataclass(slots=True)
class Running:
    spec: SystemSpec
    port: int
    process: subprocess.Popen[bytes] | None
    cold_start: float
    log: Path
    extra: dict[str, str] = field(default_factory=dict)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def pinned(cores: str, command: Sequence[str]) -> list[str]:
    """``command`` under ``taskset -c cores``; unpinned without taskset or on one core."""
    if shutil.which("taskset") is None or (os.cpu_count() or 1) < 2:
        return list(command)
    return ["taskset", "-c", cores, *command]


def _post_ok(port: int, headers: Sequence[tuple[str, str]], body: bytes) -> bool:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        data=body,
        headers={"content-type": "application/json", **dict(headers)},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status) == 200 and b"call_bench" in response.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def wait_ready(
    port: int,
    headers: Sequence[tuple[str, str]],
    process: subprocess.Popen[bytes] | None,
    started: float,
    timeout: float,
) -> float:
    """Seconds from ``started`` to the first 200 answer to a model request."""
    body = request_body(Scenario("100"), stream=False, user=10_000)
    while time.perf_counter() - started < timeout:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode} before answering")
        if _post_ok(port, headers, body):
            return time.perf_counter() - started
        time.sleep(0.02)
    raise RuntimeError(f"no 200 within {timeout:.0f} s")


def _litellm_config(path: Path, upstream_port: int) -> None:
    models = [
        Scenario(size, blocked, paced).model
        for size in ARGUMENT_SIZES
        for blocked in (False, True)
        for paced in (False, True)
    ]
    lines = ["model_list:"]
    for model in models:
        lines += [
            f"  - model_name: {model}",
            "    litellm_params:",
            f"      model: openai/{model}",
            f'      api_base: "http://127.0.0.1:{upstream_port}/v1"',
            "      api_key: sk-upstream-key",
        ]
    lines += [
        "litellm_settings:",
        "  num_retries: 0",
        "  request_timeout: 30",
        "  callbacks: []",
        "  success_callback: []",
        "  failure_callback: []",
        "  telemetry: false",
        "general_settings:",
        f"  master_key: {LITELLM_KEY}",
    ]
    path.write_text("\n".join(lines) + "\n")


def _command(spec: SystemSpec, port: int, upstream_port: int, work: Path) -> list[str]:
    upstream = f"http://127.0.0.1:{upstream_port}"
    if spec.kind == "safeagents":
        command = [sys.executable, "-m", "safeagents.cli", "serve", "--upstream", upstream]
        command += ["--port", str(port), "--store", str(work / f"{spec.name}-{port}.db")]
        command += ["--workers", str(spec.workers)]
        command += ["--no-default-rules"] if spec.rules else []  # the packs named, only
        for rules in spec.rules:
            command += ["--rules", rules]
        return command
    config = work / f"litellm-{port}.yaml"
    _litellm_config(config, upstream_port)
    return [
        str(LITELLM_VENV / "bin" / "litellm"),
        "--config",
        str(config),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--num_workers",
        str(spec.workers),
    ]


def start_system(spec: SystemSpec, upstream_port: int, work: Path, timeout: float = 120) -> Running:
    """Start ``spec`` (direct: nothing to start) and wait for its first 200."""
    log = work / f"{spec.name}.log"
    if spec.kind == "direct":
        return Running(spec, upstream_port, None, 0.0, log)
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if spec.kind == "litellm":
        env |= {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"}
    started = time.perf_counter()
    with log.open("ab") as sink:
        process = subprocess.Popen(
            pinned(spec.cores, _command(spec, port, upstream_port, work)),
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=REPO,
        )
    running = Running(spec, port, process, 0.0, log)
    try:
        running.cold_start = wait_ready(port, spec.headers, process, started, timeout)
    except RuntimeError as error:
        running.stop()
        tail = log.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"{spec.name}: {error}\n{tail}") from None
    return running


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def tree_memory(pid: int) -> dict[str, float]:
    """RSS and peak RSS (MB) of ``pid`` and its descendants, and per server process."""
    pids, queue = [], [pid]
    while queue:
        current = queue.pop()
        pids.append(current)
        queue.extend(_children(current))
    rss = peak = 0.0
    largest = 0.0
    for current in pids:
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if "VmRSS" not in fields:
            continue
        process_rss = int(fields["VmRSS"].split()[0]) / 1024
        rss += process_rss
        peak += int(fields.get("VmHWM", "0 kB").split()[0]) / 1024
        largest = max(largest, process_rss)
    return {"rss_mb": rss, "peak_mb": peak, "largest_mb": largest, "processes": len(pids)}


def litellm_version() -> str | None:
    python = LITELLM_VENV / "bin" / "python"
    if not python.exists():
        return None
    result = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('litellm'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout.strip() or None


def ensure_litellm(log: Path) -> str:
    """Create ``bench/.venvs/litellm`` with ``litellm[proxy]`` and httptools unless it is there."""
    if litellm_version() == LITELLM_VERSION:
        return LITELLM_VERSION
    print(f"installing litellm[proxy]=={LITELLM_VERSION} into {LITELLM_VENV} …", flush=True)
    python = shutil.which("python3.11") or sys.executable
    with log.open("ab") as sink:
        subprocess.run([python, "-m", "venv", str(LITELLM_VENV)], check=True, stdout=sink)
        subprocess.run(
            [
                str(LITELLM_VENV / "bin" / "pip"),
                "install",
                "-q",
                f"litellm[proxy]=={LITELLM_VERSION}",
                "httptools",
            ],
            check=True,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    version = litellm_version()
    if version != LITELLM_VERSION:
        raise RuntimeError(f"litellm install failed (found {version}); see {log}")
    return version
