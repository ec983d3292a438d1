"""A tiny Python repository with a passing pytest suite, for the task generator's tests."""

from __future__ import annotations

from pathlib import Path

CORE = '''"""Small numeric and text helpers."""


def clamp(value, low, high):
    """Limit value to the closed range from low to high."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def mean(values):
    """The arithmetic mean of a non-empty sequence of numbers."""
    total = 0
    for value in values:
        total += value
    return total / len(values)


def word_count(text):
    """Count the words of text, separated by any whitespace."""
    words = text.split()
    return len(words)
'''
EXTRA = '''def fizzbuzz(number):
    """Fizz for multiples of 3, Buzz for multiples of 5, FizzBuzz for multiples of both,
    else the number itself as text."""
    if number % 15 == 0:
        return "FizzBuzz"
    if number % 3 == 0:
        return "Fizz"
    if number % 5 == 0:
        return "Buzz"
    return str(number)
'''
INIT = 'from calc.extra import fizzbuzz\n\n__all__ = ["fizzbuzz"]\n'
TEST_CORE = """from calc.core import clamp, mean, word_count


def test_clamp():
    assert clamp(5, 0, 10) == 5
    assert clamp(-3, 0, 10) == 0
    assert clamp(12, 0, 10) == 10
    assert clamp(0, 0, 10) == 0


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5
    assert mean([7]) == 7


def test_word_count():
    assert word_count("one two  three") == 3
    assert word_count("") == 0
"""
TEST_EXTRA = """from calc.extra import fizzbuzz


def test_fizzbuzz():
    assert fizzbuzz(9) == "Fizz"
    assert fizzbuzz(10) == "Buzz"
    assert fizzbuzz(30) == "FizzBuzz"
    assert fizzbuzz(7) == "7"
"""


def make_repo(root: Path) -> Path:
    """``root`` as a package ``calc`` (two modules) with tests for each function."""
    (root / "calc").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "calc" / "__init__.py").write_text(INIT)
    (root / "calc" / "core.py").write_text(CORE)
    (root / "calc" / "extra.py").write_text(EXTRA)
    (root / "tests" / "test_core.py").write_text(TEST_CORE)
    (root / "tests" / "test_extra.py").write_text(TEST_EXTRA)
    (root / "LICENSE").write_text("MIT\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root
