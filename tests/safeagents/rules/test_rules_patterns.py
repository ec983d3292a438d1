"""Glob translation, RE2 regexes, contains, and the per-field RE2 set."""

from __future__ import annotations

import time

import pytest
import re2

from safeagents.rules._compile import (
    FILTERED_FROM,
    GlobError,
    PatternBank,
    contains_to_regex,
    glob_to_regex,
    regex_problem,
)


def glob_matches(glob: str, path: str) -> bool:
    return re2.search(glob_to_regex(glob), path) is not None


@pytest.mark.parametrize(
    "glob, path, expected",
    [
        ("tests/**", "/workspace/tests/a.py", True),
        ("tests/**", "/workspace/tests/sub/deep/b.py", True),
        ("tests/**", "/workspace/tests", True),  # the directory itself
        ("tests/**", "/workspace/mytests/a.py", False),
        ("tests/**", "/workspace/tests_old/a.py", False),
        ("test_*.py", "/workspace/test_math.py", True),
        ("test_*.py", "/workspace/pkg/test_io.py", True),
        ("test_*.py", "/workspace/pkg/test_io.pyc", False),
        ("test_*.py", "/workspace/my_test_io.py", False),
        ("test_*.py", "/workspace/test_dir/x.py", False),  # * stays within a segment
        ("/tests/**", "/tests/test_outputs.py", True),
        ("/tests/**", "/tests", True),
        ("/tests/**", "/workspace/tests/a.py", False),  # leading / anchors at the root
        ("**/conftest.py", "/conftest.py", True),
        ("**/conftest.py", "/a/b/conftest.py", True),
        ("a/**/b.py", "/x/a/b.py", True),
        ("a/**/b.py", "/x/a/y/z/b.py", True),
        ("a/**/b.py", "/x/ab.py", False),
        ("src/?.py", "/w/src/a.py", True),
        ("src/?.py", "/w/src/ab.py", False),
        ("[ab]*.txt", "/w/a1.txt", True),
        ("[ab]*.txt", "/w/c1.txt", False),
        ("[!ab]*.txt", "/w/c1.txt", True),
        ("[!ab]*.txt", "/w/a1.txt", False),
        ("*.test.ts", "/w/src/x.test.ts", True),
        ("*.test.ts", "/w/src/xtest.ts", False),  # . is literal
        ("spec/", "/w/spec/a_spec.rb", True),  # a trailing / means the dir and below
        ("conftest.py", "/w/conftest.py", True),
        ("conftest.py", "/w/not_conftest.py", False),
        ("/", "/", True),
        ("**", "/anything/at/all", True),
        ("a\\*b", "/w/a*b", True),
        ("a\\*b", "/w/axb", False),
    ],
)
def test_glob_semantics(glob: str, path: str, expected: bool) -> None:
    assert glob_matches(glob, path) is expected


@pytest.mark.parametrize("glob", ["[ab", "x/[", "[!", "[]"])
def test_unclosed_bracket_is_an_error(glob: str) -> None:
    with pytest.raises(GlobError, match="unclosed"):
        glob_to_regex(glob)


def test_regex_problem_reports_the_re2_reason() -> None:
    assert regex_problem("(") == "missing )"
    assert regex_problem("(?<=a)b") == "invalid perl operator"
    assert regex_problem(r"(?i)git\s+log") is None


def test_contains_is_literal() -> None:
    regex = contains_to_regex("a.b*(c)")
    assert re2.search(regex, "xa.b*(c)y") and not re2.search(regex, "axb*(c)")


def test_backtracking_prone_pattern_runs_linearly() -> None:
    bank = PatternBank()
    index = bank.add("command", "(a+)+$")
    other = bank.add("command", "b$")
    text = "a" * 100_000 + "b"
    started = time.perf_counter()
    assert bank.scan("command", text) == frozenset({other})
    assert bank.scan("command", "a" * 100_000) == frozenset({index})
    assert time.perf_counter() - started < 1.0


def test_bank_dedupes_and_scans_by_field() -> None:
    bank = PatternBank()
    first = bank.add("path", glob_to_regex("tests/**"))
    assert bank.add("path", glob_to_regex("tests/**")) == first
    word = bank.add("command", "pytest")
    assert bank.size("path") == 1 and bank.size("command") == 1
    assert bank.scan("path", "/w/tests/x.py") == frozenset({first})
    assert bank.scan("path", "pytest") == frozenset()
    assert bank.scan("command", "python -m pytest -q") == frozenset({word})
    assert bank.scan("content", "pytest") == frozenset()  # a field without patterns


def test_bank_falls_back_when_the_set_scan_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    bank = PatternBank()
    index = bank.add("command", "rm -rf")
    bank.compile()

    class FailingSet:
        def Match(self, text: str) -> None:  # what RE2 gives when the DFA runs out of memory
            return None

    monkeypatch.setitem(bank._sets, "command", FailingSet())
    assert bank.scan("command", "sudo rm -rf /") == frozenset({index})
    assert bank.scan("command", "ls") == frozenset()


def _wide_phrases(count: int) -> list[str]:
    return [rf"(?i)\b(add|kept)\w*\b.{{0,60}}\bcase{n}\b" for n in range(count)]


@pytest.mark.parametrize(
    "count, engine", [(FILTERED_FROM, re2.Filter), (FILTERED_FROM - 1, re2.Set)]
)
def test_many_wide_gapped_phrases_are_matched_through_a_filter(count: int, engine: type) -> None:
    bank = PatternBank()
    regexes = [*_wide_phrases(count), r"^\W*$", "pytest", r"(?i)\bskip\b.{0,3}\btest"]
    indices = [bank.add("text", regex) for regex in regexes]
    bank.compile()
    assert isinstance(bank._sets["text"], engine)
    texts = [
        "I added a branch for case3 and kept the rest for case7.",
        "Kept it simple: case0",
        "...",
        "",
        "run pytest, then skip the test",
        "nothing to see here, case12 alone",
    ]
    for text in texts:
        expected = {i for i, regex in zip(indices, regexes, strict=True) if re2.search(regex, text)}
        assert bank.scan("text", text) == frozenset(expected), text


def test_a_filtered_scan_remembered_is_forgotten_when_a_pattern_is_added() -> None:
    bank = PatternBank()
    for regex in _wide_phrases(FILTERED_FROM):
        bank.add("text", regex)
    text = "I kept a branch for case2, then ran pytest."
    first = bank.scan("text", text)
    assert bank.scan("text", text) == first and first
    added = bank.add("text", "pytest")
    assert bank.scan("text", text) == first | {added}
