"""The rollouts benchmark's CPU sampler: descendants' CPU time by component, each process
by its own command line, its pid or its nearest classified ancestor's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.rollouts_bench import KINDS, CpuSampler

# 0.6 s of CPU, then alive long enough for the sampler to see the total
BURN = (
    "import time\nend = time.process_time() + 0.6\nwhile time.process_time() < end: pass\n"
    "time.sleep(0.3)\n"
)


def test_cpu_is_counted_by_component(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test.py").write_text(BURN)
    (tmp_path / ".harnesses").mkdir()
    spawn = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {BURN!r}])\n"
    (tmp_path / ".harnesses" / "agent.py").write_text(spawn)
    named = subprocess.Popen([sys.executable, "-c", BURN])
    with CpuSampler({named.pid: "proxy"}, interval=0.05) as sampler:
        for argv in (
            [str(tmp_path / "tests" / "test.py")],  # the verifier, by its command line
            [str(tmp_path / ".harnesses" / "agent.py")],  # its child is the harness's too
            ["-c", BURN],  # nothing names it
        ):
            subprocess.run([sys.executable, *argv], check=True)
        named.wait()
    totals = sampler.totals()
    assert set(totals) == set(KINDS)
    for kind in ("verifier", "harness", "other", "proxy"):
        assert 0.5 <= totals[kind] <= 1.5, (kind, totals)
    assert totals["sandbox"] == totals["model"] == 0.0
