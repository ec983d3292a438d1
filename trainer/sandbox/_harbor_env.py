"""The ``local`` (bubblewrap) sandbox as a Harbor environment, for Harbor's import path:
``harbor trial start -e trainer.sandbox._harbor_env:BwrapEnvironment``, or the ``harbor``
backend's ``environment``. Runs in Harbor's own virtualenv (Python >= 3.12).

Harbor's environment is a long-lived container; here each command is a fresh bubblewrap
sandbox over the same host directories: the workspace at ``workdir`` and, for every other
directory Harbor uploads to (``/solution``, ``/tests``, ``/installed-agent``...), a host
directory bound at the upload's top-level directory. ``/logs/{agent,verifier,artifacts}`` are
there from the start, as Harbor's mounts are. A ``mkdir`` elsewhere lasts one command; Harbor's
``user`` is ignored: commands run as uid 1000 without capabilities. There is no network,
whatever the network policy asks for; :meth:`BwrapEnvironment.exec_limited` runs a command
with the sandbox's limits and its one way out, the proxy.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities

from trainer.sandbox._local import LocalBackend, LocalSandbox
from trainer.sandbox._protocol import (
    DEFAULT_WALL_SECONDS,
    Limits,
    ProxyAccess,
    SandboxError,
)
from trainer.sandbox._protocol import (
    ExecResult as SandboxResult,
)

__all__ = ["BwrapEnvironment"]

_LOGS = "/logs"
_PATH = "/usr/local/bin:/usr/bin:/bin"


class BwrapEnvironment(BaseEnvironment):
    """Harbor's environment interface over one :class:`LocalSandbox` (module docstring).

    Options (Harbor's ``--ek key=value`` or the ``harbor`` backend's ``options``): ``workdir``
    (default: the task's, else ``/workspace``), ``root`` (where sandboxes are made), ``expose``
    (host directories shown read-only, as for :class:`LocalBackend`), ``path`` (``$PATH``
    inside: put a Python with what the task's scripts need first) and ``cgroups``.
    """

    def __init__(
        self,
        *args: Any,
        workdir: str | None = None,
        root: str | None = None,
        expose: list[str] | None = None,
        path: str = _PATH,
        cgroups: bool = True,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("enable_environment_dir_upload", False)
        super().__init__(*args, **kwargs)
        self._workdir = workdir or self.task_env_config.workdir or "/workspace"
        self._backend = LocalBackend(root, expose=expose or (), cgroups=cgroups)
        self._path = path
        self._sandbox: LocalSandbox | None = None
        self._uploads: Path | None = None

    @staticmethod
    def type() -> str:
        return "safeagents-bwrap"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(disable_internet=True)

    def _validate_definition(self) -> None:
        """The workspace is uploaded (no image to build): nothing to check."""

    @property
    def sandbox(self) -> LocalSandbox:
        if self._sandbox is None:
            raise SandboxError("the environment is not started")
        return self._sandbox

    async def start(self, force_build: bool) -> None:
        empty = Path(tempfile.mkdtemp(prefix="harbor-empty-"))
        try:
            self._sandbox = await self._backend.create(
                empty, workdir=self._workdir, rollout_id=self.session_id
            )
        finally:
            empty.rmdir()
        directory = self._sandbox.directory
        assert directory is not None  # made by create
        self._uploads = directory / "uploads"
        logs = await self._mount(_LOGS)
        for name in ("agent", "verifier", "artifacts"):  # Harbor's mounted log directories
            (logs / name).mkdir()

    async def stop(self, delete: bool) -> None:
        if self._sandbox is not None:
            await self._sandbox.close()
            self._sandbox = None

    async def _mount(self, top: str, *, writable: bool = True) -> Path:
        """The host directory bound at ``top`` (a top-level directory), made on first use."""
        host = self.sandbox.host_path(top)
        if host is not None:
            return host
        assert self._uploads is not None
        host = self._uploads / top.strip("/").replace("/", "_")
        host.mkdir(parents=True)
        await self.sandbox.add(host, top, writable=writable)
        return host

    async def _host(self, target: str) -> Path:
        """Where an upload to ``target`` goes on the host."""
        path = PurePosixPath(target)
        if not path.is_absolute():
            path = PurePosixPath(self._workdir) / path
        host = self.sandbox.host_path(str(path))
        if host is None:
            top = f"/{path.parts[1]}" if len(path.parts) > 1 else None
            if top is None:
                raise SandboxError(f"cannot upload to {target!r}")
            await self._mount(top)
            host = self.sandbox.host_path(str(path))
        if host is None:
            raise SandboxError(f"{target!r} leads out of the sandbox")
        return host

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        host = await self._host(target_path)
        host.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(shutil.copy2, source_path, host)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        host = await self._host(target_dir)
        await asyncio.to_thread(
            shutil.copytree, source_dir, host, symlinks=True, dirs_exist_ok=True
        )

    async def add_dir(self, source: Path, target: str, *, writable: bool) -> None:
        """A copy of ``source`` at ``target``, read-only unless ``writable``, hiding what was
        there (``/logs`` the agent could write); into the workspace when ``target`` is in it."""
        workdir = PurePosixPath(self._workdir)
        inside = PurePosixPath(target)
        if inside == workdir or workdir in inside.parents:
            await self.upload_dir(source, target)
            return
        assert self._uploads is not None
        host = Path(tempfile.mkdtemp(prefix="add-", dir=self._uploads)) / "copy"
        await asyncio.to_thread(shutil.copytree, source, host, symlinks=True)
        await self.sandbox.add(host, target, writable=writable)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        content = await self.sandbox.read(source_path)
        if content is None:
            raise FileNotFoundError(f"{source_path}: no such file in the sandbox")
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        Path(target_path).write_bytes(content)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        host = self.sandbox.host_path(source_dir)
        if host is None or not host.is_dir():
            raise FileNotFoundError(f"{source_dir}: no such directory in the sandbox")
        await asyncio.to_thread(
            shutil.copytree, host, target_dir, symlinks=True, dirs_exist_ok=True
        )

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        merged = {"PATH": self._path, "HOME": "/tmp", **(self._merge_env(env) or {})}
        limits = Limits(wall_seconds=float(timeout_sec or DEFAULT_WALL_SECONDS), agent_steps=None)
        done = await self.sandbox.exec(["bash", "-c", command], env=merged, cwd=cwd, limits=limits)
        if done.timed_out:  # as Harbor's Docker environment reports it
            raise RuntimeError(f"Command timed out after {timeout_sec} seconds")
        return ExecResult(stdout=done.stdout, stderr=done.stderr, return_code=done.returncode)

    async def exec_limited(
        self,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: str | None,
        limits: Limits,
        proxy: ProxyAccess | None,
    ) -> SandboxResult:
        """``argv`` in the sandbox under ``limits``, reaching only ``proxy``."""
        return await self.sandbox.exec(argv, env=env, cwd=cwd, limits=limits, proxy=proxy)
