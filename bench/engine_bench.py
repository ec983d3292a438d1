"""Micro benchmark: cost of ``Engine.check_effects`` with 10 vs 1,000 rules.

Builds synthetic rules (a mix of regex, glob and contains leaves on ``command``, ``path`` and
``content``) in a temporary directory, then times one ``exec`` effect (the text in ``command``)
and one ``write`` effect (the text in ``content``) at 100 B, 10 KB and 100 KB.

    .venv/bin/python bench/engine_bench.py
"""

from __future__ import annotations

import random
import string
import tempfile
import time
from pathlib import Path

import yaml

from safeagents import Effect, ToolCall
from safeagents.rules import Engine, RuleSet

RULE_COUNTS = (10, 1_000)
SIZES = {"100 B": 100, "10 KB": 10_000, "100 KB": 100_000}
BUDGET_SECONDS = 0.3


def _word(rng: random.Random, length: int = 7) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(length))


def _match(rng: random.Random, index: int) -> dict[str, object]:
    kind = index % 6
    if kind == 0:
        return {"effect": "exec", "command": {"regex": rf"{_word(rng)}\s+-{_word(rng, 2)}"}}
    if kind == 1:
        return {"command": {"contains": _word(rng, 9)}}
    if kind == 2:
        return {"effect": ["write", "delete"], "path": {"glob": f"{_word(rng)}/**/*.py"}}
    if kind == 3:
        return {"path": {"glob": f"/{_word(rng, 5)}/**"}, "not": {"command": {"contains": "x"}}}
    if kind == 4:
        return {"effect": "write", "content": {"regex": rf"(?i)def\s+{_word(rng)}\("}}
    return {"any": [{"content": {"contains": _word(rng, 10)}}, {"path": {"regex": _word(rng)}}]}


def build_rules(directory: Path, count: int, seed: int = 7) -> RuleSet:
    rng = random.Random(seed)
    for index in range(count):
        rule_id = f"synthetic-{index:04d}"
        body = {
            "id": rule_id,
            "category": "other",
            "severity": "low",
            "action": "warn",
            "description": "synthetic",
            "message": "{rule}: {summary}",
            "match": _match(rng, index),
        }
        (directory / f"{rule_id}.yaml").write_text(yaml.safe_dump(body))
    return RuleSet.load([directory])


def _text(size: int, seed: int = 11) -> str:
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "     \n_-./()=:'\""
    return "".join(rng.choice(alphabet) for _ in range(size))


def _time_per_call(engine: Engine, effect: Effect) -> float:
    call = ToolCall("bench", "bash", {})
    engine.check_effects([effect], call=call, harness="pi")  # warm the RE2 DFA caches
    calls, started = 0, time.perf_counter()
    while time.perf_counter() - started < BUDGET_SECONDS:
        engine.check_effects([effect], call=call, harness="pi")
        calls += 1
    return (time.perf_counter() - started) / calls * 1e6


def main() -> None:
    engines: dict[int, Engine] = {}
    with tempfile.TemporaryDirectory() as root:
        for count in RULE_COUNTS:
            directory = Path(root) / str(count)
            directory.mkdir()
            started = time.perf_counter()
            rules = build_rules(directory, count)
            engines[count] = Engine(rules)
            print(f"load+compile {count:>5} rules: {(time.perf_counter() - started) * 1e3:8.1f} ms")
    print()
    print(f"{'effect':<18}" + "".join(f"{n:>10} rules" for n in RULE_COUNTS) + "   ratio")
    for label, size in SIZES.items():
        text = _text(size)
        effects = {
            f"exec {label}": Effect("exec", argv0="sh", argv=("sh", "-c"), command=text),
            f"write {label}": Effect("write", path="/workspace/src/module.py", content=text),
        }
        for name, effect in effects.items():
            timings = [_time_per_call(engines[count], effect) for count in RULE_COUNTS]
            ratio = timings[-1] / timings[0]
            cells = "".join(f"{t:>13.1f} µs" for t in timings)
            print(f"{name:<18}{cells}   {ratio:5.2f}x")


if __name__ == "__main__":
    main()
