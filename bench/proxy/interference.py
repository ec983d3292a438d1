"""How busy the machine was with work that is not the benchmark's (from /proc, Linux only)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CpuSnapshot", "busiest_processes", "foreign_cpu", "snapshot"]

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True, slots=True)
class CpuSnapshot:
    at: float
    busy: float
    """CPU seconds the whole machine spent busy since boot."""
    ours: float
    """CPU seconds of this process and its descendants (reaped ones included)."""


def _machine_busy() -> float:
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    values = [int(v) for v in fields[:8]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / _TICKS


def _process_times() -> dict[int, tuple[int, float, float]]:
    """pid -> (parent, own CPU seconds, own + reaped children's CPU seconds)."""
    table: dict[int, tuple[int, float, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        own = (int(fields[11]) + int(fields[12])) / _TICKS
        children = (int(fields[13]) + int(fields[14])) / _TICKS
        table[int(entry.name)] = (int(fields[1]), own, own + children)
    return table


def snapshot() -> CpuSnapshot:
    table = _process_times()
    root = os.getpid()
    ours, queue = 0.0, [root]
    while queue:
        pid = queue.pop()
        if pid in table:
            ours += table[pid][2]
        queue.extend(child for child, (parent, _, _) in table.items() if parent == pid)
    return CpuSnapshot(time.monotonic(), _machine_busy(), ours)


def foreign_cpu(start: CpuSnapshot, end: CpuSnapshot) -> float:
    """Share of one core that other work used between two snapshots (0.25 = a quarter)."""
    elapsed = end.at - start.at
    if elapsed <= 0:
        return 0.0
    return max(0.0, (end.busy - start.busy) - (end.ours - start.ours)) / elapsed


def busiest_processes(seconds: float = 1.0, top: int = 3) -> list[str]:
    """The processes that used the most CPU over ``seconds``, as ``NN% name``."""
    before = _process_times()
    time.sleep(seconds)
    after = _process_times()
    used = []
    for pid, (_, own, _) in after.items():
        delta = own - before.get(pid, (0, own, 0))[1]
        if delta > 0.01 * seconds:
            try:
                name = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                name = str(pid)
            used.append((delta / seconds, name))
    used.sort(reverse=True)
    return [f"{share * 100:.0f}% {name}" for share, name in used[:top]] or ["none above 1%"]
