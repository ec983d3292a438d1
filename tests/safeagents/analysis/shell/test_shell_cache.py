"""The LRU of analysis results: same answers as a fresh analysis, bounded, safe to share."""

from __future__ import annotations

import threading

import pytest
from shell_cases import CTX

from safeagents._actions import AnalysisContext, Effect
from safeagents.analysis._shell import analyse_uncached, analyze_shell
from safeagents.analysis._shell._cache import (
    CACHEABLE_LENGTH,
    MAX_ENTRY_WEIGHT,
    RESULTS,
    ResultCache,
)
from safeagents.analysis._shell._model import MAX_LEVEL


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    RESULTS.clear()


def test_a_repeated_call_returns_equal_effects_in_a_fresh_list() -> None:
    script = "cd src && rm -f t.py && cat > n.txt <<'EOF'\nhi\nEOF"
    first = analyze_shell(script, CTX)
    first.append(Effect("exec", command="tampered"))
    second = analyze_shell(script, CTX)
    assert second == analyse_uncached(script, CTX, 0)
    assert second is not first
    assert Effect("exec", command="tampered") not in second
    assert len(RESULTS) == 1


def test_entries_are_keyed_by_context() -> None:
    elsewhere = AnalysisContext(cwd="/srv", home="/home/u")
    assert Effect("delete", path="/workspace/t.py") in analyze_shell("rm t.py", CTX)
    assert Effect("delete", path="/srv/t.py") in analyze_shell("rm t.py", elsewhere)
    assert Effect("delete", path="/home/u/t.py") in analyze_shell("rm ~/t.py", elsewhere)


def test_entries_are_keyed_by_reparse_level() -> None:
    script = "bash -c 'rm t.py'"
    deep = analyze_shell(script, CTX, _depth=MAX_LEVEL)
    shallow = analyze_shell(script, CTX)
    assert Effect("delete", path="/workspace/t.py") in shallow
    assert Effect("delete", path="/workspace/t.py") not in deep
    assert analyze_shell(script, CTX, _depth=MAX_LEVEL) == deep


def test_long_scripts_and_heavy_results_are_not_kept() -> None:
    analyze_shell("true\n" * (CACHEABLE_LENGTH // 5 + 1), CTX)
    assert len(RESULTS) == 0
    value = "v" * 3500
    script = f"x={value}; echo " + " ".join(["$x"] * 20)
    assert len(script) <= CACHEABLE_LENGTH
    effects = analyze_shell(script, CTX)
    assert sum(len(arg) for effect in effects for arg in effect.argv) > MAX_ENTRY_WEIGHT
    assert len(RESULTS) == 0


def test_the_least_recently_used_entry_is_evicted() -> None:
    cache = ResultCache(size=2)
    effects = [Effect("read", path="/a")]
    cache.put("a", effects)
    cache.put("b", effects)
    assert cache.get("a") == effects
    cache.put("c", effects)
    assert cache.get("b") is None
    assert cache.get("a") == effects and cache.get("c") == effects


def test_size_zero_turns_the_cache_off_and_unhashable_keys_are_ignored() -> None:
    cache = ResultCache(size=0)
    cache.put("a", [Effect("read", path="/a")])
    assert cache.get("a") is None and len(cache) == 0
    live = ResultCache()
    live.put(["unhashable"], [])  # type: ignore[arg-type]
    assert live.get(["unhashable"]) is None  # type: ignore[arg-type]


def test_concurrent_callers_all_get_the_full_result() -> None:
    scripts = [f"rm t{i}.py && git status" for i in range(20)]
    expected = {script: analyse_uncached(script, CTX, 0) for script in scripts}
    failures: list[str] = []

    def work() -> None:
        for _ in range(5):
            for script in scripts:
                if analyze_shell(script, CTX) != expected[script]:
                    failures.append(script)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
