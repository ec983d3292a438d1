"""Unified diffs of the task bundles: written with difflib, applied strictly, read by git."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainer.tasks._diff import DiffError, apply_diff, diff_text, split_lines

LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "x\r\n", "tail"]), max_size=12)


def _text(lines: list[str]) -> str:
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines[:-1]) + (
        lines[-1] if lines else ""
    )


@settings(max_examples=300, deadline=None)
@given(LINES, LINES)
def test_applying_the_diff_of_two_texts_gives_the_second(old: list[str], new: list[str]) -> None:
    before, after = _text(old), _text(new)
    diff = diff_text("pkg/mod.py", before, after)
    assert (diff == "") == (before == after)
    if diff:
        assert apply_diff(diff, {"pkg/mod.py": before}.__getitem__) == {"pkg/mod.py": after}


def test_only_a_newline_ends_a_line() -> None:
    assert split_lines("a\rb\x0cc\u2028d\ne") == ["a\rb\x0cc\u2028d\n", "e"]
    assert split_lines("") == [] and split_lines("\n") == ["\n"]


def test_a_missing_final_newline_is_marked_as_diff_does() -> None:
    diff = diff_text("f.py", "x = 1\n", "x = 2")
    assert diff.endswith("+x = 2\n\\ No newline at end of file\n")
    assert apply_diff(diff, {"f.py": "x = 1\n"}.__getitem__) == {"f.py": "x = 2"}


def test_a_diff_that_does_not_fit_the_file_is_refused() -> None:
    diff = diff_text("f.py", "a\nb\nc\n", "a\nB\nc\n")
    with pytest.raises(DiffError, match=r"f.py: does not apply at line 2: 'b\\n'"):
        apply_diff(diff, {"f.py": "a\nchanged\nc\n"}.__getitem__)


@pytest.mark.parametrize(
    ("diff", "message"),
    [
        ("garbage\n", "expected '--- a/PATH' and '[+]{3} b/PATH'"),
        ("--- a/x\n+++ b/y\n", "a file renamed"),
        ("--- a/x\n+++ b/x\n@@ nonsense @@\n", "a bad hunk header"),
        ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n?odd\n", "not a line of a hunk"),
        ("--- a/x\n+++ b/x\n\\ No newline at end of file\n", "a misplaced"),
        ("--- a/x\n+++ b/x\n@@ -9 +9 @@\n-a\n", "out of order or range"),
    ],
)
def test_malformed_diffs_are_refused(diff: str, message: str) -> None:
    with pytest.raises(DiffError, match=message):
        apply_diff(diff, {"x": "a\n"}.__getitem__)


def test_git_applies_the_diffs_too(tmp_path: Path) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("def f():\n    return 1\n\n\nx = f()")
    diff = diff_text(
        "pkg/mod.py",
        (tmp_path / "pkg" / "mod.py").read_text(),
        "def f():\n    raise NotImplementedError\n",
    )
    (tmp_path / "edit.diff").write_text(diff)
    subprocess.run([git, "init", "-q", str(tmp_path)], check=True)
    subprocess.run([git, "-C", str(tmp_path), "apply", "edit.diff"], check=True)
    assert (tmp_path / "pkg" / "mod.py").read_text() == "def f():\n    raise NotImplementedError\n"
