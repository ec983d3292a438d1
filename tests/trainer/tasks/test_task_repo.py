"""Scanning a repository for the generator: its files, functions and which passing tests
call which function (one traced run of its suite)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_repo_kit import make_repo

from trainer.tasks._repo import RepositoryError, scan_repository


def test_sources_tests_functions_and_their_callers(tmp_path: Path) -> None:
    repo = scan_repository(make_repo(tmp_path / "calc-repo"), tmp_path / "scratch")
    assert repo.name == "calc-repo"
    assert repo.sources == ["calc/__init__.py", "calc/core.py", "calc/extra.py"]
    assert repo.tests == ["tests/test_core.py", "tests/test_extra.py"]
    assert [f.label for f in repo.functions] == [
        "calc/core.py:clamp",
        "calc/core.py:mean",
        "calc/core.py:word_count",
        "calc/extra.py:fizzbuzz",
    ]
    assert repo.callers == {
        "calc/core.py:clamp": ["tests/test_core.py::test_clamp"],
        "calc/core.py:mean": ["tests/test_core.py::test_mean"],
        "calc/core.py:word_count": ["tests/test_core.py::test_word_count"],
        "calc/extra.py:fizzbuzz": ["tests/test_extra.py::test_fizzbuzz"],
    }
    clamp = repo.functions[0]
    assert (clamp.start, clamp.end, clamp.body_start, clamp.lines) == (4, 10, 6, 7)
    assert not (repo.root / ".git").exists()  # the scratch copy leaves version control out


def test_a_failing_test_calls_nothing(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    broken = (root / "tests" / "test_extra.py").read_text().replace('"7"', '"8"')
    (root / "tests" / "test_extra.py").write_text(broken)
    repo = scan_repository(root, tmp_path / "scratch")
    assert "calc/extra.py:fizzbuzz" not in repo.callers
    assert "tests/test_extra.py::test_fizzbuzz" not in repo.passed


def test_repositories_that_cannot_serve_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RepositoryError, match="not a directory"):
        scan_repository(tmp_path / "nowhere", tmp_path / "s1")
    bare = tmp_path / "bare"
    (bare / "pkg").mkdir(parents=True)
    (bare / "pkg" / "m.py").write_text("def f():\n    return 1\n")
    with pytest.raises(RepositoryError, match="no test files"):
        scan_repository(bare, tmp_path / "s2")
    (bare / "test_m.py").write_text("def test_nothing():\n    assert True\n")
    with pytest.raises(RepositoryError, match="no passing test calls a function"):
        scan_repository(bare, tmp_path / "s3")
