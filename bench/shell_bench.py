"""Cost of ``analyze_shell`` alone on typical tool-call commands, a 10 KB script and a heredoc.

Prints the median and p90 in µs per call of each command, analysed from scratch each time (the
result cache off) unless ``--cached`` is given; ``--rounds N`` repeats each measurement N times
and reports medians. ``--check`` runs ``check_bench.py`` (end to end) with the cache off.

    .venv/bin/python bench/shell_bench.py [--cached] [--rounds N] [--check]
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis._shell import analyze_shell
from safeagents.analysis._shell._cache import RESULTS

BUDGET_SECONDS = 1.0
MAX_SAMPLES = 2_000

TYPICAL = {
    "pytest": "python -m pytest -q tests/test_calc.py",
    "cd+sed": "cd src && sed -n '1,40p' calc.py",
    "grep|head": "grep -rn 'def add' src/ | head -20",
    "heredoc": "cat > notes.txt <<'EOF'\nremember to run the tests\nand the linters\nEOF",
    "git": "git status --short && git diff",
    "pi ~100 B": "cd /workspace/project && python -m pytest -q tests/test_calc.py -x "
    "--tb=short 2>&1 | tail -n 30",
    "check_bench 88 B": "grep -rn 'def add' src/ | head -20 && ls -la tests && git status --short"
    " && ls -la tests",
}


def _script(size: int) -> str:
    rng = random.Random(size)
    commands = [*TYPICAL.values(), "ls -la tests && git status --short"]
    script = ""
    while len(script) < size:
        script += rng.choice(commands) + "\n"
    return script[:size].rsplit("\n", 1)[0]


def _heredoc(size: int) -> str:
    body = "x = 'a' | 1  # $(not code)\n" * (size // 27)
    return f"cat > tests/big.py <<'EOF'\n{body}EOF\n"


CASES = {**TYPICAL, "10 KB script": _script(10_000), "100 KB heredoc": _heredoc(100_000)}


def measure(script: str, analyse: Callable[[str, AnalysisContext], list[Effect]]) -> list[float]:
    context = AnalysisContext()
    analyse(script, context)
    timings: list[float] = []
    started = time.perf_counter()
    while len(timings) < MAX_SAMPLES and time.perf_counter() - started < BUDGET_SECONDS:
        begin = time.perf_counter_ns()
        analyse(script, context)
        timings.append((time.perf_counter_ns() - begin) / 1000)
    return timings


def main() -> None:
    if "--cached" not in sys.argv:
        RESULTS.size = 0
    if "--check" in sys.argv:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from check_bench import main as check_main

        check_main()
        return
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 1
    analyse = analyze_shell
    print(f"{'command':<16}{'bytes':>8}{'p50 µs':>12}{'p90 µs':>12}")
    for name, script in CASES.items():
        p50s: list[float] = []
        p90s: list[float] = []
        for _ in range(rounds):
            timings = measure(script, analyse)
            p50s.append(statistics.median(timings))
            p90s.append(statistics.quantiles(timings, n=10)[-1])
        size = len(script.encode())
        print(
            f"{name:<16}{size:>8}{statistics.median(p50s):>12.1f}{statistics.median(p90s):>12.1f}"
        )


if __name__ == "__main__":
    main()
