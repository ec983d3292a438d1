"""Simple commands: the fast path for blank-separated words agrees with the general one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shell_cases import CTX

from safeagents._actions import Effect
from safeagents.analysis._shell import analyse_uncached
from safeagents.analysis._shell._simple import SimpleCommands

SCRIPTS = [
    "python -m pytest -q tests/test_calc.py -x --tb=short 2>&1 | tail -n 30",
    "cd src && sed -n '1,40p' calc.py",
    "grep -rn 'def add' src/ | head -20",
    "cat > notes.txt <<'EOF'\nremember\nEOF",
    "python - <<'EOF'\nimport os\nos.remove('tests/t.py')\nEOF",
    "r\\\nm -rf te\\\nsts",
    "> out.txt rm -f a b",
    "rm a > log.txt b c",
    "echo hi >> f 2>&1 extra",
    "X=1 Y=2 rm $X $Y",
    "rm tests/\u00e9t\u00e9.py 'caf\u00e9' \"na\u00efve\"",
    "cp -r a b/ ; mv c d && ln -s e f",
    "rm ~/x ~root/y {a,b}.py",
    "git   status\t--short   &&   git diff",
]


def _never(*args: object) -> None:
    return None


@pytest.fixture
def general_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SimpleCommands, "_blank_separated", _never)


def _both(script: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Effect], list[Effect]]:
    fast = analyse_uncached(script, CTX, 0)
    with monkeypatch.context() as patch:
        patch.setattr(SimpleCommands, "_blank_separated", _never)
        general = analyse_uncached(script, CTX, 0)
    return fast, general


@pytest.mark.parametrize("script", SCRIPTS)
def test_fast_and_general_paths_agree(script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, general = _both(script, monkeypatch)
    assert fast == general
    assert any(effect.kind == "exec" for effect in fast)


def test_the_general_path_finds_lost_and_glued_words(general_only: None) -> None:
    assert Effect("delete", path="/workspace/tests") in analyse_uncached(
        "r\\\nm -rf te\\\nsts", CTX, 0
    )
    effects = analyse_uncached("rm a > log.txt b c", CTX, 0)
    assert {e.path for e in effects if e.kind == "delete"} == {
        "/workspace/a",
        "/workspace/b",
        "/workspace/c",
    }


_FRAGMENTS = st.sampled_from(
    ["rm", "cat", "x", "-f", "'a b'", '"c d"', "\\\n", " ", "  ", "\t", "2>&1", "> f", "<<EOF\n",
     "EOF\n", "|", "&&", ";", "\n", "$x", "x=1", "{a,b}", "~/t", "-", "\u00e9", "$(ls)", "#c"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(_FRAGMENTS, min_size=1, max_size=25).map(" ".join))
def test_fast_and_general_paths_agree_on_generated_commands(script: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, general = _both(script, monkeypatch)
    assert fast == general
