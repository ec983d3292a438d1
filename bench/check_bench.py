"""Cost of checking one tool call end to end: normalise + analyse + match.

Times ``Firewall.check_call`` (harness plugin, shell/Python/patch analysers, rule matching) on
realistic calls at argument sizes 100 B, 10 KB and 100 KB, with the bundled packs, with 10
synthetic rules and with 1,000 synthetic rules (plus the bundled packs' detectors' costs where
they apply). Prints p50 and p99 in µs per call; then the same calls at turn 200 of a session
(200 earlier calls and their outputs: test files read, scratch files written, runs), which
shows whether the cost of one check grows with the session's length; then whole Python
modules written at turn 200, each seen for the first time (real code: the synthetic source
above has few of the shapes detectors look closer at, and repeating one call measures warm
caches); then the cost of checking a turn's own words (``Firewall.said`` + ``check_said``,
one ``say`` effect per sentence) at 1 KB, 10 KB and 64 KB of reasoning, one text repeated,
and at 1 KB and 10 KB in new words every turn.

    .venv/bin/python bench/check_bench.py
"""

from __future__ import annotations

import ast
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_bench import build_rules

from safeagents import AnalysisContext, Firewall, SessionState, ToolCall

SIZES = {"100 B": 100, "10 KB": 10_000, "100 KB": 100_000}
SAMPLES = 400
BUDGET_SECONDS = 1.5


def _python_source(size: int) -> str:
    rng = random.Random(size)
    lines = []
    while sum(len(line) + 1 for line in lines) < size:
        n = rng.randrange(1000)
        lines.append(f"def helper_{n}(value):\n    return value * {n} + {rng.randrange(9)}\n")
    return "".join(lines)[:size]


def _shell_script(size: int) -> str:
    rng = random.Random(size)
    commands = [
        "python -m pytest -q tests/test_calc.py",
        "grep -rn 'def add' src/ | head -20",
        "cd src && sed -n '1,40p' calc.py",
        "ls -la tests && git status --short",
        "cat > notes.txt <<'EOF'\nremember to run the tests\nEOF",
    ]
    script = ""
    while len(script) < size:
        script += rng.choice(commands) + " && "
    return script[:size].rsplit(" && ", 1)[0]


def _calls(size: int) -> dict[str, tuple[str, ToolCall]]:
    source = _python_source(size)
    patch = (
        "*** Begin Patch\n*** Update File: src/calc.py\n@@\n"
        + "".join(f"+{line}\n" for line in source.splitlines())
        + "*** End Patch\n"
    )
    return {
        "pi bash": ("pi", ToolCall("c1", "bash", {"command": _shell_script(size)})),
        "claude Write .py": (
            "claude-code",
            ToolCall("c2", "Write", {"file_path": "src/calc.py", "content": source}),
        ),
        "codex apply_patch": ("codex", ToolCall("c3", "apply_patch", {"input": patch})),
    }


def _measure(engine: Firewall, harness: str, call: ToolCall) -> list[float]:
    context = AnalysisContext()
    engine.check_call(call, harness=harness, context=context, session=SessionState())
    timings: list[float] = []
    started = time.perf_counter()
    while len(timings) < SAMPLES and time.perf_counter() - started < BUDGET_SECONDS:
        begin = time.perf_counter_ns()
        engine.check_call(call, harness=harness, context=context, session=SessionState())
        timings.append((time.perf_counter_ns() - begin) / 1000)
    return timings


TURNS = 200


def _history(engine: Firewall, turns: int) -> SessionState:
    """A session after ``turns`` calls of a realistic mix, fed as ``check`` feeds it."""
    state = SessionState()
    observe_user = getattr(state, "observe_user", None)
    if observe_user is not None:
        observe_user("Fix calc.add; tests/test_calc.py must pass.\n" + _python_source(2_000))
    context = AnalysisContext()
    for turn in range(turns):
        step = turn % 4
        if step == 0:
            command = f"cat tests/test_calc_{turn}.py"
            output = "".join(
                f"def test_{i}():\n    assert add({i}, {turn}) == {i + turn}\n" for i in range(40)
            )
        elif step == 1:
            command = f"cat > scratch_{turn}.py <<'EOF'\n{_python_source(1_000)}\nEOF"
            output = ""
        elif step == 2:
            command = "python -m pytest -q tests/ 2>&1 | tail -30"
            output = "".join(f"tests/test_calc_{i}.py::test_{i} PASSED\n" for i in range(60))
        else:
            command = f"ls -la src tests && rm scratch_{turn - 2}.py"
            output = "".join(f"-rw-r--r-- 1 root root 120 test_calc_{i}.py\n" for i in range(30))
        call = ToolCall(f"h{turn}", "bash", {"command": command})
        engine.check_call(call, harness="pi", context=context, session=state)
        observe_output = getattr(state, "observe_output", None)
        if observe_output is not None:
            observe_output(output)
        else:
            state.tool_outputs.append(output)
    return state


def _copy(state: SessionState) -> SessionState:
    fork = getattr(state, "fork", None)
    if fork is not None:
        copied: SessionState = fork()
        return copied
    return SessionState(list(state.effects), list(state.tool_outputs))


def _measure_at(engine: Firewall, harness: str, call: ToolCall, state: SessionState) -> list[float]:
    context = AnalysisContext()
    engine.check_call(call, harness=harness, context=context, session=_copy(state))
    timings: list[float] = []
    started = time.perf_counter()
    while len(timings) < SAMPLES and time.perf_counter() - started < BUDGET_SECONDS:
        session = _copy(state)
        begin = time.perf_counter_ns()
        engine.check_call(call, harness=harness, context=context, session=session)
        timings.append((time.perf_counter_ns() - begin) / 1000)
    return timings


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> None:
    with tempfile.TemporaryDirectory() as root:
        engines: dict[str, Firewall] = {"bundled packs": Firewall.load()}
        for count in (10, 1_000):
            directory = Path(root) / str(count)
            directory.mkdir()
            engines[f"{count} synthetic"] = Firewall(build_rules(directory, count))
    rows: list[dict[str, object]] = []
    header = f"{'call':<20}{'size':>8}" + "".join(f"{name:>24}" for name in engines)
    print(header + "\n" + " " * 28 + "".join(f"{'p50 / p99 µs':>24}" for _ in engines))
    for label, size in SIZES.items():
        for name, (harness, call) in _calls(size).items():
            cells = ""
            for engine_name, engine in engines.items():
                timings = _measure(engine, harness, call)
                p50, p99 = _p(timings, 50), _p(timings, 99)
                cells += f"{p50:>14.0f} / {p99:>7.0f}"
                rows.append(
                    {"call": name, "size": label, "engine": engine_name, "p50": p50, "p99": p99}
                )
            print(f"{name:<20}{label:>8}{cells}")
    print()
    for call in ("pi bash", "claude Write .py", "codex apply_patch"):
        many = _row(rows, call, "10 KB", "1000 synthetic")
        few = _row(rows, call, "10 KB", "10 synthetic")
        print(f"1,000 rules / 10 rules at 10 KB, {call}: {many / few:.2f}x")
    print()
    bundled = engines["bundled packs"]
    state = _history(bundled, TURNS)
    print(f"bundled packs, 10 KB calls, turn 1 vs turn {TURNS} (p50 / p99 µs)")
    for name, (harness, tool_call) in _calls(SIZES["10 KB"]).items():
        first = _row(rows, name, "10 KB", "bundled packs")
        timings = _measure_at(bundled, harness, tool_call, state)
        p50, p99 = _p(timings, 50), _p(timings, 99)
        rows.append(
            {"call": name, "size": "10 KB", "engine": f"turn {TURNS}", "p50": p50, "p99": p99}
        )
        print(f"{name:<20}{first:>10.0f}{p50:>14.0f} / {p99:>7.0f}   {p50 / first:.2f}x")
    _module_rows(bundled, state, rows)
    _said_rows(engines)
    if "--json" in sys.argv:
        print(json.dumps(rows))


MODULES = 40
"""Standard-library modules written (the largest first), each cut to its first 10 KB of
whole top-level statements: the same code for every tree on one Python version."""


def _modules() -> list[tuple[str, str]]:
    directory = Path(os.__file__).parent
    paths = sorted(directory.glob("*.py"), key=lambda path: (-path.stat().st_size, path.name))
    modules: list[tuple[str, str]] = []
    for path in paths[:MODULES]:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        kept = ""
        for node in ast.parse(text).body:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            chunk = "".join(lines[first - 1 : node.end_lineno])
            if len(kept) + len(chunk) > SIZES["10 KB"]:
                break
            kept += chunk
        modules.append((path.name, kept))
    return modules


def _module_rows(engine: Firewall, state: SessionState, rows: list[dict[str, object]]) -> None:
    """Each module written three times, each time with a new last line, so that no cache of
    an earlier check holds its parse or its facts."""
    context = AnalysisContext()
    timings: list[float] = []
    for name, source in _modules():
        for round_ in range(3):
            content = f"{source}\n# {round_}\n"
            call = ToolCall("m", "Write", {"file_path": f"src/{name}", "content": content})
            session = _copy(state)
            begin = time.perf_counter_ns()
            engine.check_call(call, harness="claude-code", context=context, session=session)
            timings.append((time.perf_counter_ns() - begin) / 1000)
    p50, p99 = _p(timings, 50), _p(timings, 99)
    mean = statistics.fmean(timings)
    rows.append({"call": "module Write", "size": "10 KB", "engine": "first sight", "p50": p50})
    print(f"\nbundled packs, {MODULES} standard-library modules written at turn {TURNS}, each")
    print(f"seen for the first time (10 KB): p50 {p50:.0f} / p99 {p99:.0f} µs, mean {mean:.0f}")


_SENTENCES = (
    "Let me look at the failing test first and see what it expects.",
    "The docstring says the answer for 12 is 5, but the assertion on line 20 says 6.",
    "I think the digit DP is right; the off-by-one is in how I count the upper bound.",
    "Running pytest again to confirm the fix holds for the larger inputs.",
    "The helper caches results per (position, tight) pair, so it stays linear.",
    "Wait, that cannot be right: the sample output contradicts the constraint.",
    "I'll add a regression test of my own in a scratch file and delete it afterwards.",
    "All 14 tests pass now, including the edge case for an empty list.",
)


_SAID_SIZES = {"1 KB": 1_000, "10 KB": 10_000, "64 KB": 64_000}


def _reasoning(size: int) -> str:
    rng = random.Random(size)
    text = ""
    while len(text) < size:
        text += rng.choice(_SENTENCES) + (" " if rng.random() < 0.8 else "\n\n")
    return text[:size]


def _new_words(size: int, seed: int) -> str:
    """Reasoning whose sentences no earlier turn had: the words of :data:`_SENTENCES`, drawn
    anew (repeating one text keeps every pattern scan's automaton warm, which real turns,
    each in words of its own, do not)."""
    rng = random.Random(seed)
    words = " ".join(_SENTENCES).split()
    text = ""
    while len(text) < size:
        sentence = " ".join(rng.choice(words) for _ in range(rng.randrange(6, 20)))
        text += sentence.capitalize().rstrip(".,:;") + ". "
    return text[:size]


def _measure_said(engine: Firewall, texts: list[str]) -> list[float]:
    timings: list[float] = []
    started = time.perf_counter()
    while len(timings) < SAMPLES and time.perf_counter() - started < BUDGET_SECONDS:
        text = texts[len(timings) % len(texts)]
        begin = time.perf_counter_ns()
        said = engine.said(text)
        engine.check_said(said, harness="claude-code", session=SessionState())
        timings.append((time.perf_counter_ns() - begin) / 1000)
    return timings


def _said_rows(engines: dict[str, Firewall]) -> None:
    print("\na turn's own words (said + check_said), p50 / p99 µs")
    rows = [("reasoning", label, [_reasoning(size)]) for label, size in _SAID_SIZES.items()]
    rows += [
        ("new words each turn", label, [_new_words(size, seed) for seed in range(SAMPLES)])
        for label, size in list(_SAID_SIZES.items())[:2]
    ]
    for name, label, texts in rows:
        sentences = len(Firewall.said(texts[0]))
        cells = ""
        for engine in engines.values():
            timings = _measure_said(engine, texts)
            cells += f"{_p(timings, 50):>14.0f} / {_p(timings, 99):>7.0f}"
        print(f"{name:<20}{label:>8}{cells}   ({sentences} sentences)")


def _row(rows: list[dict[str, object]], call: str, size: str, engine: str) -> float:
    for row in rows:
        if row["call"] == call and row["size"] == size and row["engine"] == engine:
            value = row["p50"]
            assert isinstance(value, float)
            return value
    raise KeyError((call, size, engine))


if __name__ == "__main__":
    main()
