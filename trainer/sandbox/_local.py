"""The ``local`` backend: bubblewrap namespaces on this machine.

Every command runs in fresh user, pid, network, ipc, uts and cgroup namespaces, with no
capabilities, a read-only view of the system directories (and of the directories the
backend is told to expose: Python, the harnesses), a private ``/tmp``, the rollout's
workspace and what was added to the sandbox. Nothing else of the host is there: not the task
directory, not another rollout. The network namespace has only loopback; with a
:class:`ProxyAccess` the first process (``_relay.py``) listens on the proxy's port and
relays to a unix socket served by a :class:`ProxyBridge`. When the command's first process
exits, or the limits end it, the pid namespace dies and every process in it with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from trainer.sandbox._bridge import ProxyBridge
from trainer.sandbox._cgroup import Cgroup, CgroupLimits, Cgroups, CgroupsUnavailable, find_cgroups
from trainer.sandbox._files import copy_tree, remove_tree
from trainer.sandbox._protocol import AGENT_LIMITS, ExecResult, Limits, ProxyAccess, SandboxError

__all__ = ["LocalBackend", "LocalSandbox", "default_exposed", "visible"]

_RELAY = Path(__file__).with_name("_relay.py")
_RUN = "/run/safeagents"
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_SANDBOX_UID = 1000
_JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
logger = logging.getLogger("safeagents.trainer.sandbox")


def default_exposed() -> tuple[Path, ...]:
    """This Python's environment and installation (the agent's and the verifier's python)."""
    prefixes = {Path(sys.prefix), Path(sys.base_prefix).resolve(), Path(sys.executable).parent}
    return tuple(sorted(prefixes))


def visible(path: str | Path, exposed: Iterable[Path]) -> bool:
    """Whether ``path`` is visible in a sandbox showing the system directories and
    ``exposed``."""
    resolved = Path(path).resolve()
    system = [Path(entry).resolve() for entry in _SYSTEM if Path(entry).exists()]
    return any(_inside(resolved, entry) for entry in (*exposed, *system))


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


@dataclass(frozen=True, slots=True)
class _Mount:
    source: Path
    target: str
    writable: bool


class LocalBackend:
    """Makes :class:`LocalSandbox` es under ``root`` (a fresh temporary directory by default)."""

    name = "local"

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        expose: Iterable[str | Path] = (),
        bwrap: str | None = None,
        cgroups: bool = True,
    ) -> None:
        found = bwrap or shutil.which("bwrap")
        if found is None:
            raise SandboxError("the local sandbox needs bubblewrap (apt-get install bubblewrap)")
        self.bwrap = found
        self.root = Path(root or tempfile.mkdtemp(prefix="safeagents-sandboxes-")).resolve()
        self.exposed: tuple[Path, ...] = ()
        self.expose(*default_exposed(), *expose)
        self._checked = False
        self._want_cgroups = cgroups
        self.cgroups: Cgroups | None = None
        """Where each command's cgroup is made (``None``: per-process rlimits only)."""
        self.cgroup_note = "" if cgroups else "cgroups turned off"
        """Why commands get no cgroup (empty when they do)."""

    def expose(self, *paths: str | Path) -> None:
        """Show ``paths`` (read-only) in the sandboxes made from now on."""
        added = tuple(Path(path).resolve() for path in paths)
        if any(_inside(self.root, path) for path in added):
            raise SandboxError(f"the sandboxes' root {self.root} is inside an exposed directory")
        self.exposed = tuple(dict.fromkeys((*self.exposed, *added)))

    def exposes(self, path: str | Path) -> bool:
        """Whether ``path`` is visible inside this backend's sandboxes."""
        return visible(path, self.exposed)

    def check(self) -> None:
        """Run ``true`` in a sandbox once, or raise :class:`SandboxError` saying why not."""
        if self._checked:
            return
        with tempfile.TemporaryDirectory() as scratch:
            (Path(scratch) / "workspace").mkdir()
            sandbox = LocalSandbox(self, Path(scratch) / "workspace", "/workspace")
            argv = sandbox.bwrap_argv(
                ["true"], cwd="/", limits=AGENT_LIMITS, socket=None, port=None
            )
            done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
        if done.returncode != 0:
            raise SandboxError(
                f"bubblewrap cannot make a sandbox here (exit {done.returncode}): "
                f"{done.stderr.strip()[-500:]}; unprivileged user namespaces may be off "
                "(sysctl kernel.unprivileged_userns_clone, "
                "kernel.apparmor_restrict_unprivileged_userns)"
            )
        if self._want_cgroups:
            try:
                self.cgroups = find_cgroups()
            except CgroupsUnavailable as problem:
                self.cgroup_note = str(problem)
                logger.warning(
                    "sandbox commands get no cgroup, only per-process rlimits "
                    "(no limit on their total memory, process count or CPU share): %s",
                    problem,
                )
        self._checked = True

    async def create(self, workspace: Path, *, workdir: str, rollout_id: str) -> LocalSandbox:
        if not PurePosixPath(workdir).is_absolute():
            raise SandboxError(f"the workdir must be an absolute path, got {workdir!r}")
        await asyncio.to_thread(self.check)
        self.root.mkdir(parents=True, exist_ok=True)
        prefix = f"{_UNSAFE.sub('_', rollout_id)[:40]}-"
        directory = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix=prefix, dir=self.root))
        try:
            await asyncio.to_thread(copy_tree, workspace, directory / "workspace")
        except OSError as problem:
            await asyncio.to_thread(remove_tree, directory)
            raise SandboxError(f"copying the workspace: {problem}") from problem
        return LocalSandbox(self, directory / "workspace", workdir, owned=directory)

    def attach(self, workspace: Path, *, workdir: str) -> LocalSandbox:
        """A sandbox over ``workspace`` itself (not a copy), which ``close`` leaves in place."""
        if not PurePosixPath(workdir).is_absolute():
            raise SandboxError(f"the workdir must be an absolute path, got {workdir!r}")
        if not workspace.is_dir():
            raise SandboxError(f"{workspace}: not a directory")
        self.check()
        return LocalSandbox(self, workspace.resolve(), workdir)


class LocalSandbox:
    """One rollout's bubblewrap sandbox (see the module docstring)."""

    def __init__(
        self, backend: LocalBackend, workspace: Path, workdir: str, *, owned: Path | None = None
    ) -> None:
        self.backend = backend
        self.workspace = workspace
        self.workdir = workdir
        self.directory = owned
        """What ``close`` removes: the copy made for this sandbox (``None`` when attached)."""
        self._closed = False
        self._mounts: list[_Mount] = [_Mount(self.workspace, workdir, True)]

    async def add(self, source: Path, target: str, *, writable: bool = False) -> None:
        if not PurePosixPath(target).is_absolute():
            raise SandboxError(f"{target!r}: sandbox paths are absolute")
        if not source.is_dir():
            raise SandboxError(f"{source}: not a directory")
        self._mounts.append(_Mount(source.resolve(), target, writable))

    def bwrap_argv(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        limits: Limits,
        socket: Path | None,
        port: int | None,
    ) -> list[str]:
        """The ``bwrap`` command line that runs ``argv`` in this sandbox."""
        command = [self.backend.bwrap, "--unshare-all", "--unshare-user", "--die-with-parent"]
        command += ["--new-session", "--hostname", "sandbox"]
        command += ["--uid", str(_SANDBOX_UID), "--gid", str(_SANDBOX_UID)]
        for entry in _SYSTEM:
            path = Path(entry)
            if path.is_symlink():
                command += ["--symlink", os.readlink(path), entry]
            elif path.exists():
                command += ["--ro-bind", entry, entry]
        command += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run"]
        for exposed in self.backend.exposed:
            command += ["--ro-bind-try", str(exposed), str(exposed)]
        for mount in self._mounts:
            flag = "--bind" if mount.writable else "--ro-bind"
            command += [flag, str(mount.source), mount.target]
        command += ["--ro-bind", str(_RELAY), f"{_RUN}/relay.py"]
        relay = [sys.executable, "-I", "-S", f"{_RUN}/relay.py"]
        if socket is not None and port is not None:
            command += ["--bind", str(socket), f"{_RUN}/proxy.sock"]
            relay += ["--listen", str(port), "--socket", f"{_RUN}/proxy.sock"]
        for flag, value in (
            ("--cpu", limits.cpu_seconds),
            ("--memory", limits.memory_bytes),
            ("--files", limits.file_bytes),
        ):
            if value is not None:
                relay += [flag, str(value)]
        command += ["--chdir", cwd, "--", *relay, "--", *argv]
        return command

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
        if self._closed or not self.workspace.is_dir():
            raise SandboxError("the sandbox is closed")
        with tempfile.TemporaryDirectory(prefix="sa-") as sockets:
            bridge = None
            if proxy is not None:
                bridge = ProxyBridge(
                    Path(sockets) / "p.sock",
                    host=proxy.host,
                    port=proxy.port,
                    session_id=proxy.session_id,
                    max_requests=limits.agent_steps,
                )
                await bridge.start()
            try:
                return await self._run(argv, env, cwd or self.workdir, limits, bridge, proxy)
            finally:
                if bridge is not None:
                    await bridge.close()

    async def _run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        cwd: str,
        limits: Limits,
        bridge: ProxyBridge | None,
        proxy: ProxyAccess | None,
    ) -> ExecResult:
        command = self.bwrap_argv(
            argv,
            cwd=cwd,
            limits=limits,
            socket=bridge.socket_path if bridge else None,
            port=proxy.port if proxy else None,
        )
        started = time.monotonic()
        group = self._cgroup(limits)
        ready_read, ready_write = os.pipe()
        info_read, info_write = os.pipe()
        command[1:1] = ["--info-fd", str(info_write)]
        command[-len(argv) - 1 : -len(argv) - 1] = ["--ready-fd", str(ready_write)]  # relay's
        if group is not None:  # joined before bubblewrap starts: nothing it forks escapes
            command = ["/bin/sh", "-c", _JOIN, "sh", *map(str, group.procs_files), "--", *command]
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=(ready_write, info_write),
            )
        except OSError as problem:
            os.close(ready_read)
            os.close(info_read)
            await _release(group)
            raise SandboxError(f"cannot start bubblewrap: {problem}") from problem
        finally:
            os.close(ready_write)
            os.close(info_write)
        try:
            with os.fdopen(ready_read, "rb") as ready, os.fdopen(info_read, "rb") as info:
                result = await self._wait(process, ready, started, limits, bridge)
                await _namespace_gone(await asyncio.to_thread(info.read))
        finally:
            hit = await _release(group)
        if group is None:
            return result
        return dataclasses.replace(result, cgroup=True, limits_hit=hit)

    def _cgroup(self, limits: Limits) -> Cgroup | None:
        """A fresh cgroup for one command, or ``None`` where cgroups are not used."""
        cgroups = self.backend.cgroups
        if cgroups is None:
            return None
        name = f"safeagents-{self.directory.name if self.directory else 'attached'}"
        wanted = CgroupLimits(limits.total_memory_bytes, limits.processes, limits.cpus)
        try:
            return cgroups.create(name, wanted)
        except OSError as problem:
            raise SandboxError(f"cannot make the command's cgroup: {problem}") from problem

    async def _wait(
        self,
        process: asyncio.subprocess.Process,
        ready: BinaryIO,
        started: float,
        limits: Limits,
        bridge: ProxyBridge | None,
    ) -> ExecResult:
        output = asyncio.ensure_future(process.communicate())
        stops: set[asyncio.Future[object]] = {output}  # type: ignore[arg-type]
        if bridge is not None:
            stops.add(asyncio.ensure_future(bridge.limit_reached.wait()))
        try:
            done, _ = await asyncio.wait(
                stops, timeout=limits.wall_seconds, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            if not output.done():
                _kill(process.pid)
            for stop in stops:
                if stop is not output:
                    stop.cancel()
        stdout, stderr = await output
        if not await asyncio.to_thread(ready.read):  # the relay never ran: no sandbox
            raise SandboxError(f"bubblewrap failed: {stderr.decode(errors='replace')[-500:]}")
        ended = output in done
        step_limit = not ended and bridge is not None and bridge.limit_reached.is_set()
        return ExecResult(
            returncode=process.returncode if ended else None,
            stdout=stdout.decode(errors="replace"),
            stderr=stderr.decode(errors="replace"),
            seconds=time.monotonic() - started,
            timed_out=not ended and not step_limit,
            step_limit=step_limit,
            steps=bridge.requests if bridge else 0,
            refused=tuple(bridge.refused) if bridge else (),
        )

    def host_path(self, path: str) -> Path | None:
        """Where ``path`` inside is on the host: in the workspace or a directory added, never
        through a link out of it (``None`` then, and for the rest of the sandbox)."""
        inside = PurePosixPath(path)
        latest_first = reversed(self._mounts)  # a later mount at the same place hides the earlier
        for mount in sorted(latest_first, key=lambda m: -len(PurePosixPath(m.target).parts)):
            target = PurePosixPath(mount.target)
            if inside == target or target in inside.parents:
                host = (mount.source / inside.relative_to(target)).resolve()
                return host if _inside(host, mount.source.resolve()) else None
        return None

    async def read(self, path: str) -> bytes | None:
        host = self.host_path(path)
        if host is None or not host.is_file():
            return None  # a link out of the sandbox reads as nothing
        return await asyncio.to_thread(host.read_bytes)

    async def close(self) -> None:
        self._closed = True
        if self.directory is not None:
            await asyncio.to_thread(remove_tree, self.directory)


async def _release(group: Cgroup | None) -> tuple[str, ...]:
    """Kill what is left in ``group`` and remove it; the limits it hit."""
    if group is None:
        return ()
    hit = group.events()
    emptied = await asyncio.to_thread(group.kill)
    try:
        await asyncio.to_thread(group.remove)
    except OSError as problem:
        raise SandboxError(f"cannot remove the command's cgroup: {problem}") from problem
    if not emptied:
        raise SandboxError("processes of the command outlived its cgroup's kill")
    return hit


async def _namespace_gone(info: bytes, timeout: float = 10.0) -> None:
    """Wait until the sandbox's pid namespace is empty: its first process (whose host pid and
    namespace bubblewrap wrote to ``--info-fd``) ends only after the kernel killed the rest.
    Bubblewrap itself may exit before that."""
    try:
        described = json.loads(info)
        pid, namespace = int(described["child-pid"]), int(described["pid-namespace"])
    except (ValueError, KeyError, TypeError):
        return  # bubblewrap failed before making the namespace
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if os.stat(f"/proc/{pid}/ns/pid").st_ino != namespace:
                return
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):  # gone
            return
        if state in ("Z", "X"):  # it has exited: the namespace is empty
            return
        await asyncio.sleep(0.005)
    raise SandboxError(f"the sandbox's processes outlived it by {timeout:g}s")


def _kill(pid: int) -> None:
    """Kill bubblewrap; its namespace's first process, and so every process, follows."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
