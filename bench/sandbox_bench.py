"""What the local sandbox costs, outside the model and the harness.

1. Start to first command: ``true`` as a plain subprocess, in a sandbox without network, and
   in a sandbox with the proxy bridge (the relay listening on the proxy's port first).
2. Workspace copies: ``cp -a --reflink=auto`` against ``shutil.copytree`` (bubblewrap 0.8 has
   no overlay mounts; on ext4 ``--reflink=auto`` is a plain copy).
3. One rollout's sandbox overhead: create (copy) + the agent's command + the hidden tests
   added + the verifier's command + the reward read back + close, with ``true`` for the agent
   and a one-line verifier, against the same steps as plain subprocesses in a copied
   directory (what the unsandboxed HarnessEnvironment does).

    .venv/bin/python bench/sandbox_bench.py [--runs N] [--workspace DIR]

Prints medians and p90s in milliseconds. The default workspace is this repository's
``safeagents/`` package (a realistic small project).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from trainer.sandbox import LocalBackend, ProxyAccess, copy_tree, remove_tree

ENV = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": "/tmp"}
VERIFIER = 'echo 1 > "${LOGS:-/logs/verifier}/reward.txt"'


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


def _summary(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return (
        f"| {name} | {statistics.median(ordered) * 1000:.1f} | {p90 * 1000:.1f} | {len(ordered)} |"
    )


async def _timed(runs: int, action: Callable[[], Awaitable[object]]) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await action()
        samples.append(time.perf_counter() - started)
    return samples


async def _plain(argv: list[str], cwd: Path | None = None) -> None:
    process = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=ENV)
    await process.wait()


async def main(runs: int, workspace: Path) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="sandbox-bench-"))
    backend = LocalBackend(scratch / "sandboxes")
    empty = scratch / "empty"
    empty.mkdir()
    tests = scratch / "tests"
    tests.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = ProxyAccess("127.0.0.1", server.server_address[1], "bench")
    sandbox = await backend.create(empty, workdir="/workspace", rollout_id="bench")
    rows = ["| what | median ms | p90 ms | runs |", "|---|---|---|---|"]
    rows.append(_summary("plain subprocess: true", await _timed(runs, lambda: _plain(["true"]))))
    rows.append(
        _summary(
            "sandbox, no network: true",
            await _timed(runs, lambda: sandbox.exec(["true"], env=ENV)),
        )
    )
    rows.append(
        _summary(
            "sandbox + proxy bridge: true",
            await _timed(runs, lambda: sandbox.exec(["true"], env=ENV, proxy=proxy)),
        )
    )
    await sandbox.close()

    files = sum(1 for path in workspace.rglob("*") if path.is_file())
    counter = iter(range(10**6))

    async def copy_with_cp() -> None:
        target = scratch / f"cp-{next(counter)}"
        await asyncio.to_thread(copy_tree, workspace, target)
        await asyncio.to_thread(remove_tree, target)

    async def copy_with_shutil() -> None:
        target = scratch / f"sh-{next(counter)}"
        await asyncio.to_thread(shutil.copytree, workspace, target, symlinks=True)
        await asyncio.to_thread(remove_tree, target)

    rows.append(_summary(f"copy+remove, cp -a ({files} files)", await _timed(runs, copy_with_cp)))
    rows.append(
        _summary(f"copy+remove, shutil ({files} files)", await _timed(runs, copy_with_shutil))
    )

    async def sandboxed_rollout() -> None:
        box = await backend.create(workspace, workdir="/workspace", rollout_id="r")
        await box.exec(["true"], env=ENV, proxy=proxy)
        logs = Path(tempfile.mkdtemp(dir=scratch))
        (logs / "verifier").mkdir()
        await box.add(tests, "/tests")
        await box.add(logs, "/logs", writable=True)
        await box.exec(["sh", "-c", VERIFIER], env=ENV)
        assert await box.read("/logs/verifier/reward.txt") == b"1\n"
        await box.close()
        remove_tree(logs)

    async def plain_rollout() -> None:
        root = scratch / f"plain-{next(counter)}"
        await asyncio.to_thread(copy_tree, workspace, root)
        await _plain(["true"], cwd=root)
        logs = Path(tempfile.mkdtemp(dir=scratch))
        await _plain(["sh", "-c", VERIFIER.replace("/logs/verifier", str(logs))], cwd=root)
        assert (logs / "reward.txt").read_bytes() == b"1\n"
        await asyncio.to_thread(remove_tree, root)
        remove_tree(logs)

    rows.append(_summary("rollout overhead, sandboxed", await _timed(runs, sandboxed_rollout)))
    rows.append(_summary("rollout overhead, plain", await _timed(runs, plain_rollout)))
    server.shutdown()
    server.server_close()
    remove_tree(scratch)
    print("\n".join(rows))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument(
        "--workspace", type=Path, default=Path(__file__).resolve().parents[1] / "safeagents"
    )
    options = parser.parse_args()
    asyncio.run(main(options.runs, options.workspace))
