"""Each sandboxed command gets its own cgroup: a fork bomb and a memory hog are stopped,
nothing survives, the cgroup is removed; without a writable hierarchy, rlimits with a note."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

import pytest
from sandbox_kit import require_sandbox

from trainer.sandbox import ExecResult, Limits, LocalBackend, LocalSandbox, SandboxError
from trainer.sandbox._cgroup import CgroupLimits, Cgroups, CgroupsUnavailable, find_cgroups

ENV = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": "/tmp"}
_MIB = 1024**2


@pytest.fixture
def backend(tmp_path: Path) -> LocalBackend:
    """A local backend whose commands get cgroups, or skip (fail where
    SAFEAGENTS_REQUIRE_CGROUPS=1) saying why they cannot here."""
    found = require_sandbox(tmp_path / "sandboxes")
    if found.cgroups is None:
        if os.environ.get("SAFEAGENTS_REQUIRE_CGROUPS") == "1":
            pytest.fail(found.cgroup_note)
        pytest.skip(found.cgroup_note)
    return found


def _sandbox(backend: LocalBackend, tmp_path: Path, rollout: str) -> LocalSandbox:
    workspace = tmp_path / rollout
    workspace.mkdir()
    return asyncio.run(backend.create(workspace, workdir="/workspace", rollout_id=rollout))


def _run(sandbox: LocalSandbox, script: str, limits: Limits) -> ExecResult:
    return asyncio.run(sandbox.exec(["bash", "-c", script], env=ENV, limits=limits))


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


def _leftovers(backend: LocalBackend) -> list[Path]:
    assert backend.cgroups is not None
    mine = f"-{os.getpid()}-"  # the cgroups this test process made
    return [
        child
        for parent in backend.cgroups.parents.values()
        for child in parent.iterdir()
        if child.name.startswith("safeagents-") and mine in child.name
    ]


def test_a_command_runs_in_its_own_cgroup_which_is_removed(
    backend: LocalBackend, tmp_path: Path
) -> None:
    sandbox = _sandbox(backend, tmp_path, "own")
    result = _run(sandbox, "cat /proc/self/cgroup; ls /sys/fs/cgroup 2>&1", Limits())
    assert result.cgroup and result.limits_hit == ()
    *groups, missing = result.stdout.splitlines()
    # the cgroup namespace is rooted at the command's own cgroup, which it cannot leave
    assert all(line.endswith(":/") for line in groups), result.stdout
    assert "No such file or directory" in missing
    assert _leftovers(backend) == []
    backend.cgroups = Cgroups(1, {"pids": tmp_path / "no-hierarchy"})
    with pytest.raises(SandboxError, match="cannot make the command's cgroup"):
        _run(sandbox, "true", Limits())
    asyncio.run(sandbox.close())


def test_a_fork_bomb_is_stopped_at_the_process_limit_and_nothing_survives(
    backend: LocalBackend, tmp_path: Path
) -> None:
    sandbox = _sandbox(backend, tmp_path, "bomb")
    bomb = sandbox.workspace / "bomb-31337.sh"
    bomb.write_text("bash /workspace/bomb-31337.sh & bash /workspace/bomb-31337.sh &\nwait\n")
    limits = Limits(wall_seconds=4.0, processes=64)
    result = _run(sandbox, "bash /workspace/bomb-31337.sh", limits)
    assert result.timed_out and "processes" in result.limits_hit
    assert _alive("bomb-31337.sh") == []
    assert _leftovers(backend) == []
    asyncio.run(sandbox.close())


def test_memory_hogs_are_stopped_at_the_commands_total_and_nothing_survives(
    backend: LocalBackend, tmp_path: Path
) -> None:
    sandbox = _sandbox(backend, tmp_path, "hog")
    # each hog stays under the per-process limit; together they exceed the command's total
    hog = "import time; x = bytearray(100 * 1024**2); x[::4096] = b'x' * len(x[::4096]); "
    held = "time.sleep(2); print('held')"
    script = f'for i in 1 2 3 4; do python -c "{hog}{held}" hog-27182 & done; wait'
    limits = Limits(wall_seconds=20.0, memory_bytes=200 * _MIB, total_memory_bytes=256 * _MIB)
    result = _run(sandbox, script, limits)
    assert "memory" in result.limits_hit and not result.timed_out
    assert result.stdout.count("held") < 4  # the OOM killer ended some of them
    one = _run(
        sandbox, f'exec python -c "{hog}"', Limits(memory_bytes=None, total_memory_bytes=64 * _MIB)
    )
    assert one.returncode != 0 and "memory" in one.limits_hit
    fine = _run(sandbox, f'python -c "{hog}"', Limits(total_memory_bytes=256 * _MIB))
    assert fine.returncode == 0 and fine.limits_hit == ()
    assert _alive("hog-27182") == []
    assert _leftovers(backend) == []
    asyncio.run(sandbox.close())


def test_without_cgroups_the_per_process_limits_apply_with_a_logged_note(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_sandbox(tmp_path / "probe")

    def unavailable() -> None:
        raise CgroupsUnavailable("cgroup v1: no pids hierarchy mounted")

    monkeypatch.setattr("trainer.sandbox._local.find_cgroups", unavailable)
    backend = LocalBackend(tmp_path / "sandboxes")
    with caplog.at_level(logging.WARNING, logger="safeagents.trainer.sandbox"):
        backend.check()
    assert backend.cgroups is None and "no pids hierarchy" in backend.cgroup_note
    assert "only per-process rlimits" in caplog.text and "no pids hierarchy" in caplog.text
    sandbox = _sandbox(backend, tmp_path, "plain")
    result = _run(
        sandbox, "exec python -c 'x = bytearray(512 * 1024**2)'", Limits(memory_bytes=256 * _MIB)
    )
    assert not result.cgroup and result.returncode == 1 and "MemoryError" in result.stderr
    off = LocalBackend(tmp_path / "off", cgroups=False)
    off.check()
    assert off.cgroups is None and off.cgroup_note == "cgroups turned off"
    asyncio.run(sandbox.close())


def _hierarchy(tmp_path: Path, mounts: str, own: str) -> tuple[Path, Path]:
    (tmp_path / "mounts").write_text(mounts)
    (tmp_path / "cgroup").write_text(own)
    return tmp_path / "mounts", tmp_path / "cgroup"


def test_v1_hierarchies_are_found_below_this_process_own_cgroup(tmp_path: Path) -> None:
    root = tmp_path / "fs"
    for controller in ("memory", "pids", "cpu"):
        (root / controller / "job").mkdir(parents=True)
    mounts, own = _hierarchy(
        tmp_path,
        "".join(
            f"cgroup {root / name} cgroup rw,relatime,{name} 0 0\n"
            for name in ("memory", "pids", "cpu")
        ),
        "4:memory:/job\n8:pids:/job\n1:cpu:/job\n0::/\n",
    )
    found = find_cgroups(mounts, own)
    assert found.version == 1
    assert found.parents == {name: root / name / "job" for name in ("memory", "pids", "cpu")}
    group = found.create("safeagents-x", CgroupLimits(256 * _MIB, 64, 0.5))
    directory = group.directories["memory"]
    assert (directory / "memory.limit_in_bytes").read_text() == str(256 * _MIB)
    assert (group.directories["pids"] / "pids.max").read_text() == "64"
    assert (group.directories["cpu"] / "cpu.cfs_quota_us").read_text() == "50000"
    assert [path.parent.parent for path in group.procs_files] == list(found.parents.values())


def test_v2_is_used_when_its_controllers_can_be_enabled(tmp_path: Path) -> None:
    unified = tmp_path / "unified"
    (unified / "job").mkdir(parents=True)
    (unified / "job" / "cgroup.controllers").write_text("cpu memory pids\n")
    (unified / "job" / "cgroup.subtree_control").write_text("memory\n")
    mounts, own = _hierarchy(tmp_path, f"cgroup2 {unified} cgroup2 rw 0 0\n", "0::/job\n")
    found = find_cgroups(mounts, own)
    assert found.version == 2 and found.parents == {"": unified / "job"}
    group = found.create("safeagents-y", CgroupLimits(128 * _MIB, 32, 1.0))
    directory = group.directories[""]
    assert (directory / "memory.max").read_text() == str(128 * _MIB)
    assert (directory / "pids.max").read_text() == "32"
    assert (directory / "cpu.max").read_text() == "100000 100000"
    assert group.procs_files == [directory / "cgroup.procs"]


def test_no_usable_hierarchy_says_why(tmp_path: Path) -> None:
    unified = tmp_path / "unified"
    unified.mkdir()
    (unified / "cgroup.controllers").write_text("hugetlb\n")
    (unified / "cgroup.subtree_control").write_text("")
    mounts, own = _hierarchy(tmp_path, f"cgroup2 {unified} cgroup2 rw 0 0\n", "0::/\n")
    with pytest.raises(CgroupsUnavailable) as raised:
        find_cgroups(mounts, own)
    assert "memory, pids not available" in str(raised.value)
    assert "no memory or pids hierarchy mounted" in str(raised.value)
    with pytest.raises(CgroupsUnavailable, match="cannot read the cgroup mounts"):
        find_cgroups(tmp_path / "missing", own)
