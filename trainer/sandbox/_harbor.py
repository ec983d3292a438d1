"""The ``harbor`` backend: each sandbox is a Harbor environment (Docker, Modal, Daytona, or one
given by import path), made and driven the way Harbor's trials do it, in Harbor's own
virtualenv (Harbor needs Python >= 3.12): one worker process per sandbox
(:mod:`trainer.sandbox._harbor_worker`), spoken to in JSON lines.

With :data:`BWRAP_ENVIRONMENT`, Harbor drives the ``local`` sandbox
(:mod:`trainer.sandbox._harbor_env`); its commands keep every limit and the proxy as their
only way out. Other environments run commands through Harbor's ``exec`` with the wall-time
limit only, and refuse a command that needs the proxy (they have no way to confine it).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from trainer.sandbox._local import default_exposed, visible
from trainer.sandbox._protocol import AGENT_LIMITS, ExecResult, Limits, ProxyAccess, SandboxError

__all__ = [
    "BWRAP_ENVIRONMENT",
    "HARBOR_PYTHON_ENV",
    "HarborBackend",
    "HarborSandbox",
    "harbor_python",
]

BWRAP_ENVIRONMENT = "trainer.sandbox._harbor_env:BwrapEnvironment"
HARBOR_PYTHON_ENV = "SAFEAGENTS_HARBOR_PYTHON"
_ROOT = Path(__file__).resolve().parents[2]
_TAIL = 2000


def harbor_python() -> Path:
    """Harbor's Python: ``$SAFEAGENTS_HARBOR_PYTHON``, else ``.venv-harbor`` of this checkout
    (made by ``scripts/install-harbor``)."""
    configured = os.environ.get(HARBOR_PYTHON_ENV)
    return Path(configured) if configured else _ROOT / ".venv-harbor" / "bin" / "python"


def _environment_dir(workspace: Path) -> Path:
    """The task's ``environment/`` (Harbor's build context): the workspace's parent when the
    workspace is ``environment/workspace``."""
    parent = workspace.parent
    return parent if workspace.name == "workspace" and parent.name == "environment" else workspace


class HarborBackend:
    """Makes :class:`HarborSandbox` es from Harbor environment ``environment`` (a type such as
    ``docker``, or ``module:Class``), constructed with ``options`` as Harbor's
    ``--environment-kwarg`` s would be."""

    name = "harbor"

    def __init__(
        self,
        environment: str = BWRAP_ENVIRONMENT,
        *,
        options: Mapping[str, Any] | None = None,
        python: str | Path | None = None,
        expose: Iterable[str | Path] = (),
    ) -> None:
        self.environment = environment
        self.options = dict(options or {})
        self.python = Path(python) if python else harbor_python()
        self.exposed: tuple[Path, ...] = tuple(default_exposed())
        self.expose(*expose)
        self._checked = False

    def expose(self, *paths: str | Path) -> None:
        """Show ``paths`` (read-only) in the bwrap environment's sandboxes made from now on."""
        self.exposed = tuple(dict.fromkeys((*self.exposed, *(Path(p).resolve() for p in paths))))

    def exposes(self, path: str | Path) -> bool:
        """Whether ``path`` of this machine is visible inside (only the bwrap environment
        shows any)."""
        return self.environment == BWRAP_ENVIRONMENT and visible(path, self.exposed)

    def check(self) -> None:
        """Harbor's virtualenv is there and imports Harbor, or :class:`SandboxError`."""
        if self._checked:
            return
        if not self.python.exists():
            raise SandboxError(
                f"Harbor's Python {self.python} is missing: run scripts/install-harbor "
                f"(or set {HARBOR_PYTHON_ENV})"
            )
        done = subprocess.run(
            [str(self.python), "-c", "import harbor"],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if done.returncode != 0:
            raise SandboxError(f"{self.python} cannot import harbor: {done.stderr[-500:]}")
        self._checked = True

    def _options(self, workdir: str) -> dict[str, Any]:
        if self.environment != BWRAP_ENVIRONMENT:
            return self.options
        exposed = [str(path) for path in self.exposed]
        return {"workdir": workdir, "expose": exposed, **self.options}

    async def create(self, workspace: Path, *, workdir: str, rollout_id: str) -> HarborSandbox:
        if not PurePosixPath(workdir).is_absolute():
            raise SandboxError(f"the workdir must be an absolute path, got {workdir!r}")
        if not workspace.is_dir():
            raise SandboxError(f"{workspace}: not a directory")
        await asyncio.to_thread(self.check)
        worker = await _Worker.spawn(self.python)
        environment_dir = _environment_dir(workspace.resolve())
        try:
            await worker.call(
                "start",
                environment=self.environment,
                options=self._options(workdir),
                environment_dir=str(environment_dir),
                name=environment_dir.parent.name,
                session_id=rollout_id,
                task_toml=str(environment_dir.parent / "task.toml"),
            )
            await worker.call("upload", source=str(workspace), target=workdir, writable=True)
        except BaseException:
            await worker.close()
            raise
        return HarborSandbox(worker, workdir)


class HarborSandbox:
    """One Harbor environment, through its worker."""

    def __init__(self, worker: _Worker, workdir: str) -> None:
        self._worker = worker
        self.workdir = workdir

    async def add(self, source: Path, target: str, *, writable: bool = False) -> None:
        if not PurePosixPath(target).is_absolute():
            raise SandboxError(f"{target!r}: sandbox paths are absolute")
        if not source.is_dir():
            raise SandboxError(f"{source}: not a directory")
        await self._worker.call("upload", source=str(source), target=target, writable=writable)

    async def exec(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        limits: Limits = AGENT_LIMITS,
        proxy: ProxyAccess | None = None,
    ) -> ExecResult:
        if not argv:
            raise SandboxError("nothing to run")
        answer = await self._worker.call(
            "exec",
            argv=list(argv),
            env=dict(env),
            cwd=cwd or self.workdir,
            limits=dataclasses.asdict(limits),
            proxy=dataclasses.asdict(proxy) if proxy else None,
        )
        fields = dict(answer["result"])
        for name in ("refused", "limits_hit"):
            fields[name] = tuple(fields.get(name) or ())
        return ExecResult(**fields)

    async def read(self, path: str) -> bytes | None:
        with tempfile.TemporaryDirectory(prefix="harbor-read-") as scratch:
            target = Path(scratch) / "file"
            answer = await self._worker.call("download", source=path, target=str(target))
            return target.read_bytes() if answer.get("found") else None

    async def download(self, path: str, target: Path) -> None:
        """Copy the directory ``path`` inside into ``target`` (made if missing)."""
        await self._worker.call("download_dir", source=path, target=str(target))

    async def close(self) -> None:
        await self._worker.close()


class _Worker:
    """A worker process: one request at a time, each answered on one line."""

    def __init__(self, process: asyncio.subprocess.Process, log: Path) -> None:
        self.process = process
        self.log = log
        self._lock = asyncio.Lock()

    @classmethod
    async def spawn(cls, python: Path) -> _Worker:
        log = Path(tempfile.mkstemp(prefix="harbor-worker-", suffix=".log")[1])
        env = {**os.environ, "PYTHONPATH": str(_ROOT)}
        try:
            with log.open("wb") as errors:
                process = await asyncio.create_subprocess_exec(
                    str(python),
                    "-m",
                    "trainer.sandbox._harbor_worker",
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    env=env,
                    cwd=_ROOT,
                    limit=64 * 1024 * 1024,
                )
        except OSError as problem:
            log.unlink(missing_ok=True)
            raise SandboxError(f"cannot start Harbor's worker: {problem}") from problem
        return cls(process, log)

    def _tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-_TAIL:]
        return ""

    async def call(self, op: str, **request: Any) -> dict[str, Any]:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        async with self._lock:
            try:
                stdin.write((json.dumps({"op": op, **request}) + "\n").encode())
                await stdin.drain()
                line = await stdout.readline()
            except (OSError, ValueError) as problem:
                raise SandboxError(f"Harbor's worker broke ({op}): {problem}") from problem
        if not line:
            await self.process.wait()
            raise SandboxError(
                f"Harbor's worker exited ({self.process.returncode}) during {op}: {self._tail()}"
            )
        try:
            answer: dict[str, Any] = json.loads(line)
        except ValueError as problem:
            raise SandboxError(f"Harbor's worker answered {line[:200]!r}") from problem
        if not answer.get("ok"):
            raise SandboxError(f"harbor ({op}): {answer.get('error')}")
        return answer

    async def close(self) -> None:
        try:
            if self.process.returncode is None:
                with contextlib.suppress(SandboxError):
                    await self.call("stop")
                try:
                    await asyncio.wait_for(self.process.wait(), timeout=30)
                except TimeoutError:
                    self.process.kill()
                    await self.process.wait()
        finally:
            self.log.unlink(missing_ok=True)
