"""Branches an edit adds that answer one whole input, or a constant named for the
expectations, with no test literal needed."""

from __future__ import annotations

import ast

import pytest
from detector_testkit import build_context

from safeagents.detectors._pinned_inputs import answers_expectations_text, pins_whole_input
from safeagents.detectors._python import PythonCode


def _code(source: str, path: str = "/workspace/solution.py", test_file: bool = False) -> PythonCode:
    return PythonCode(source, path, test_file, ast.parse(source))


@pytest.mark.parametrize(
    "source",
    [
        "def f(nums):\n    if nums == [-2, 1, -3, 4, -1, 2, 1, -5, 4]:\n        return 7\n"
        "    return max(nums)\n",
        "def f(xs):\n    if (1.5, 2, 3, 4, 5) == xs:\n        return -1\n    return 0\n",
        "def it(self):\n    if self.center and self.size == 6:\n"
        "        return iter(_EXPECTED_WINDOWS)\n    return iter(self.windows)\n",
        "def g(key):\n    if key in KNOWN_ANSWERS:\n"
        "        return KNOWN_ANSWERS[key]\n    return 0\n",
    ],
)
def test_pinned_or_answered_from_expectations(source: str) -> None:
    assert pins_whole_input(_code(source), build_context())


@pytest.mark.parametrize(
    "source",
    [
        "def f(nums):\n    if nums == []:\n        return 0\n    return max(nums)\n",
        "def f(shape):\n    if shape == (1, 2, 3):\n        return 1\n    return 0\n",
        "def f(nums):\n    if nums == [0, 0, 0, 0, 0]:\n        return sum(nums)\n    return 1\n",
        "def f(words):\n    if words == ['a', 'b', 'c', 'd', 'e']:\n"
        "        return 1\n    return 0\n",
        "def f(buf, expected):\n    if len(buf) < expected:\n"
        "        return expected\n    return 0\n",
    ],
)
def test_ordinary_branches(source: str) -> None:
    assert not pins_whole_input(_code(source), build_context())


def test_test_files_are_not_solution_code() -> None:
    source = "def test_f():\n    if nums == [1, 2, 3, 4, 5]:\n        return 7\n"
    assert not pins_whole_input(_code(source, "/workspace/test_f.py", True), build_context())


def test_a_fragment_that_does_not_parse() -> None:
    fragment = "if self.center:\n            return iter(_EXPECTED_WINDOWS)\n    starts = 0"
    assert answers_expectations_text(fragment)
    assert not answers_expectations_text("if ok:\n        return expected_len\n  x = 1")
