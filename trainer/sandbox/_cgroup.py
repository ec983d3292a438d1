"""Control groups for sandboxed commands: the whole command's memory, process count and CPU
share, and a kill that reaches every process it started.

Each command gets its own cgroup, made under this process's own cgroup (so a delegated or
nested hierarchy is respected), joined before bubblewrap starts, emptied and removed when the
command ends. cgroup v2 is used where its ``memory`` and ``pids`` controllers can be enabled
below this process's cgroup; otherwise the v1 ``memory`` and ``pids`` hierarchies (with
``cpu`` and ``freezer`` when mounted). Where neither is writable, :func:`find_cgroups` says
why, and the per-process rlimits are all that limit a command.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cgroup", "CgroupLimits", "Cgroups", "CgroupsUnavailable", "find_cgroups"]

_NEEDED = ("memory", "pids")
_OPTIONAL_V1 = ("cpu", "freezer")
_PERIOD_US = 100_000
_counter = itertools.count()


class CgroupsUnavailable(Exception):
    """No writable cgroup hierarchy with the controllers a sandbox needs."""


@dataclass(frozen=True, slots=True)
class CgroupLimits:
    """What all the processes of one command may use together; ``None`` leaves it off."""

    memory_bytes: int | None
    processes: int | None
    cpus: float | None


def _mounts(mounts: Path) -> tuple[Path | None, dict[str, Path]]:
    """The cgroup v2 mount point and the v1 mount point of each controller."""
    unified: Path | None = None
    v1: dict[str, Path] = {}
    for line in mounts.read_text().splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        if fields[2] == "cgroup2":
            unified = unified or Path(fields[1])
        elif fields[2] == "cgroup":
            for option in fields[3].split(","):
                v1.setdefault(option, Path(fields[1]))
    return unified, v1


def _own_paths(own: Path) -> dict[str, str]:
    """This process's cgroup in each hierarchy: ``""`` is v2, else the v1 controller."""
    paths: dict[str, str] = {}
    for line in own.read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _below(mount: Path, path: str) -> Path:
    return mount / path.lstrip("/")


def _writable(directory: Path) -> str | None:
    """Why no cgroup can be made in ``directory`` (``None``: one can)."""
    probe = directory / f"safeagents-probe-{os.getpid()}-{next(_counter)}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError as problem:
        return f"cannot make a cgroup in {directory}: {problem.strerror or problem}"
    return None


def find_cgroups(
    mounts: Path = Path("/proc/self/mounts"), own: Path = Path("/proc/self/cgroup")
) -> Cgroups:
    """The cgroups a sandbox can use here, or :class:`CgroupsUnavailable` saying why not."""
    try:
        unified, v1 = _mounts(mounts)
        paths = _own_paths(own)
    except (OSError, ValueError) as problem:
        raise CgroupsUnavailable(f"cannot read the cgroup mounts: {problem}") from problem
    reasons: list[str] = []
    if unified is not None and "" in paths:
        parent = _below(unified, paths[""])
        why = _enable_v2(parent)
        if why is None:
            return Cgroups(2, {"": parent})
        reasons.append(f"cgroup v2: {why}")
    missing = [controller for controller in _NEEDED if controller not in v1]
    if missing:
        reasons.append(f"cgroup v1: no {' or '.join(missing)} hierarchy mounted")
        raise CgroupsUnavailable("; ".join(reasons))
    parents: dict[str, Path] = {}
    for controller in (*_NEEDED, *_OPTIONAL_V1):
        if controller not in v1:
            continue
        parent = _below(v1[controller], paths.get(controller, "/"))
        why = _writable(parent)
        if why is None:
            parents[controller] = parent
        elif controller in _NEEDED:
            reasons.append(f"cgroup v1: {why}")
            raise CgroupsUnavailable("; ".join(reasons))
    return Cgroups(1, parents)


def _enable_v2(parent: Path) -> str | None:
    """Enable ``memory``, ``pids`` (and ``cpu``) for ``parent``'s children, or say why not."""
    try:
        available = set((parent / "cgroup.controllers").read_text().split())
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
    except OSError as problem:
        return f"cannot read {parent}: {problem.strerror or problem}"
    missing = [controller for controller in _NEEDED if controller not in available]
    if missing:
        return f"{', '.join(missing)} not available in {parent}"
    for controller in (*_NEEDED, "cpu"):
        if controller in available and controller not in enabled:
            try:
                (parent / "cgroup.subtree_control").write_text(f"+{controller}")
            except OSError as problem:
                return (
                    f"cannot enable {controller} below {parent} ({problem.strerror or problem}; "
                    "run under a delegated cgroup without processes of its own)"
                )
    return _writable(parent)


class Cgroups:
    """Where commands' cgroups are made: ``parents`` maps each v1 controller (or ``""`` for
    v2) to the directory new cgroups go in."""

    def __init__(self, version: int, parents: dict[str, Path]) -> None:
        self.version = version
        self.parents = parents

    def __repr__(self) -> str:
        where = ", ".join(f"{name or 'unified'}={path}" for name, path in self.parents.items())
        return f"Cgroups(v{self.version}: {where})"

    def create(self, name: str, limits: CgroupLimits) -> Cgroup:
        """A new cgroup ``name`` (unique per process) with ``limits`` written."""
        unique = f"{name}-{os.getpid()}-{next(_counter)}"
        made: dict[str, Path] = {}
        try:
            for controller, parent in self.parents.items():
                directory = parent / unique
                directory.mkdir()
                made[controller] = directory
            group = Cgroup(self.version, made)
            group.limit(limits)
        except OSError:
            Cgroup(self.version, made).remove()
            raise
        return group


class Cgroup:
    """One command's cgroup (a directory in each hierarchy used)."""

    def __init__(self, version: int, directories: dict[str, Path]) -> None:
        self.version = version
        self.directories = directories

    @property
    def procs_files(self) -> list[Path]:
        """What a process writes its pid to, to join (each hierarchy's ``cgroup.procs``)."""
        return [directory / "cgroup.procs" for directory in self.directories.values()]

    def _file(self, controller: str, name: str) -> Path | None:
        directory = self.directories.get("" if self.version == 2 else controller)
        return None if directory is None else directory / name

    def _write(self, controller: str, name: str, value: str, *, required: bool = True) -> None:
        path = self._file(controller, name)
        if path is None:
            return
        try:
            path.write_text(value)
        except OSError:
            if required:
                raise

    def limit(self, limits: CgroupLimits) -> None:
        if self.version == 2:
            if limits.memory_bytes is not None:
                self._write("memory", "memory.max", str(limits.memory_bytes))
                self._write("memory", "memory.swap.max", "0", required=False)
            if limits.processes is not None:
                self._write("pids", "pids.max", str(limits.processes))
            if limits.cpus is not None:
                quota = max(1000, int(limits.cpus * _PERIOD_US))
                self._write("cpu", "cpu.max", f"{quota} {_PERIOD_US}", required=False)
            return
        if limits.memory_bytes is not None:
            self._write("memory", "memory.limit_in_bytes", str(limits.memory_bytes))
            self._write(
                "memory", "memory.memsw.limit_in_bytes", str(limits.memory_bytes), required=False
            )
        if limits.processes is not None:
            self._write("pids", "pids.max", str(limits.processes))
        if limits.cpus is not None:
            self._write("cpu", "cpu.cfs_period_us", str(_PERIOD_US))
            self._write("cpu", "cpu.cfs_quota_us", str(max(1000, int(limits.cpus * _PERIOD_US))))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self.procs_files:
            with contextlib.suppress(OSError, ValueError):
                found |= {int(line) for line in path.read_text().split()}
        return found

    def events(self) -> tuple[str, ...]:
        """The limits that stopped something: ``memory`` (the OOM killer ran), ``processes``
        (a fork was refused)."""
        hit: list[str] = []
        memory = self._file(
            "memory", "memory.events" if self.version == 2 else "memory.oom_control"
        )
        if memory is not None and _counter_in(memory, "oom_kill") > 0:
            hit.append("memory")
        pids = self._file("pids", "pids.events")
        if pids is not None and _counter_in(pids, "max") > 0:
            hit.append("processes")
        return tuple(hit)

    def kill(self, timeout: float = 10.0) -> bool:
        """Kill every process in the cgroup; whether it is empty within ``timeout``."""
        deadline = time.monotonic() + timeout
        kill_file = self._file("", "cgroup.kill") if self.version == 2 else None
        if kill_file is not None and kill_file.exists():
            with contextlib.suppress(OSError):
                kill_file.write_text("1")
        while time.monotonic() < deadline:
            with self._frozen():
                left = self.pids()
                for pid in left:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
            if not left:
                return True
            time.sleep(0.01)
        return not self.pids()

    @contextlib.contextmanager
    def _frozen(self) -> Iterator[None]:
        """Freeze the cgroup (where a freezer is there), so that nothing forks while killed."""
        if self.version == 2:
            state, frozen, thawed = self._file("", "cgroup.freeze"), "1", "0"
        else:
            state, frozen, thawed = self._file("freezer", "freezer.state"), "FROZEN", "THAWED"
        try:
            if state is not None:
                state.write_text(frozen)
        except OSError:
            state = None
        try:
            yield
        finally:
            if state is not None:
                with contextlib.suppress(OSError):
                    state.write_text(thawed)

    def remove(self, timeout: float = 5.0) -> None:
        """Remove the cgroup's directories (an emptied cgroup may take a moment to let go)."""
        deadline = time.monotonic() + timeout
        for directory in self.directories.values():
            while True:
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.01)


def _counter_in(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0
