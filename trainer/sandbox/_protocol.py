"""What a sandbox backend offers a rollout, in the shape of Harbor's environments: a
workspace, files added by path, and commands run inside with limits and one way out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = [
    "AGENT_LIMITS",
    "DEFAULT_AGENT_STEPS",
    "DEFAULT_WALL_SECONDS",
    "VERIFIER_LIMITS",
    "ExecResult",
    "Limits",
    "ProxyAccess",
    "Sandbox",
    "SandboxBackend",
    "SandboxError",
]

DEFAULT_AGENT_STEPS = 30
DEFAULT_WALL_SECONDS = 20 * 60.0
_GIB = 1024**3


class SandboxError(RuntimeError):
    """The sandbox itself failed (it could not start, or broke): not the agent's doing."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one command in a sandbox may use; ``None`` leaves a limit off."""

    wall_seconds: float = DEFAULT_WALL_SECONDS
    cpu_seconds: int | None = 20 * 60
    """CPU time of each process."""
    memory_bytes: int | None = 8 * _GIB
    """Private writable memory of each process (``RLIMIT_DATA``: reserved address space, which
    V8 and the JVM take plenty of, does not count)."""
    file_bytes: int | None = 2 * _GIB
    """Largest file a process may write."""
    agent_steps: int | None = DEFAULT_AGENT_STEPS
    """Model requests through the proxy; the next one is refused and the command ended."""
    total_memory_bytes: int | None = 8 * _GIB
    """Memory of all the command's processes together (its cgroup; the OOM killer ends
    what exceeds it)."""
    processes: int | None = 1024
    """Processes and threads of the command at once (its cgroup's ``pids.max``)."""
    cpus: float | None = 2.0
    """CPU time per second of wall time, in CPUs (its cgroup's quota)."""


AGENT_LIMITS = Limits()
VERIFIER_LIMITS = Limits(wall_seconds=600.0, agent_steps=None)


@dataclass(frozen=True, slots=True)
class ProxyAccess:
    """The one address a sandboxed command may reach: the proxy, as one session.

    Inside, the proxy answers at ``http://127.0.0.1:{port}/s/{session_id}/``, the URL the
    harness was given when the proxy listens on loopback port ``port``.
    """

    host: str
    port: int
    session_id: str


@dataclass(frozen=True, slots=True)
class ExecResult:
    """How a sandboxed command ended."""

    returncode: int | None
    """``None`` when it was killed for the wall-time or step limit."""
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    step_limit: bool = False
    steps: int = 0
    """Model requests it made through the proxy."""
    refused: tuple[str, ...] = ()
    """Requests the proxy bridge refused (``METHOD target``)."""
    cgroup: bool = False
    """Whether it ran in its own cgroup (else only the per-process limits applied)."""
    limits_hit: tuple[str, ...] = ()
    """Cgroup limits that stopped something: ``memory`` (OOM kill), ``processes``."""

    @property
    def output(self) -> str:
        return f"{self.stdout}\n{self.stderr}".strip()


@runtime_checkable
class Sandbox(Protocol):
    """One rollout's sandbox; every process it started is gone once a command returns."""

    workdir: str
    """The workspace's path inside the sandbox (the commands' default working directory)."""

    async def add(self, source: Path, target: str, *, writable: bool = False) -> None:
        """Make ``source`` (a directory) visible at ``target`` to the commands run from now."""
        ...

    async def exec(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        limits: Limits = AGENT_LIMITS,
        proxy: ProxyAccess | None = None,
    ) -> ExecResult:
        """Run ``argv`` inside; without ``proxy`` it has no network at all."""
        ...

    async def read(self, path: str) -> bytes | None:
        """The file at ``path`` inside the sandbox, or ``None`` if there is none."""
        ...

    async def close(self) -> None:
        """Remove the workspace and everything added writable."""
        ...


@runtime_checkable
class SandboxBackend(Protocol):
    """Makes sandboxes; ``name`` is what configs select it by (``local``, ``harbor``)."""

    name: str

    async def create(self, workspace: Path, *, workdir: str, rollout_id: str) -> Sandbox:
        """A sandbox whose ``workdir`` starts as a private copy of ``workspace``."""
        ...
