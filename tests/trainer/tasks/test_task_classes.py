"""Pieces of the task classes: removing a feature's exports, and difficulty from size."""

from __future__ import annotations

import ast

from trainer.tasks._classes import _uses, _without_exports, difficulty_of

PACKAGE_INIT = """from .a import (x,
    mean, y)
from .b import mean
__all__ = ['x', 'mean']
if x:
    from c import mean
print(x)
"""


def test_a_removed_feature_leaves_the_imports_and_all_of_the_package() -> None:
    assert _without_exports(PACKAGE_INIT, "mean") == (
        "from .a import (\n    x,\n    y,\n)\npass\n__all__ = ['x']\nif x:\n    pass\nprint(x)\n"
    )
    assert _without_exports(PACKAGE_INIT, "median") == PACKAGE_INIT


def test_only_code_that_refers_to_the_name_counts_as_a_use() -> None:
    assert not _uses(ast.parse(_without_exports(PACKAGE_INIT, "mean")), "mean")
    assert _uses(ast.parse("def f(v):\n    return stats.mean(v)\n"), "mean")
    assert _uses(ast.parse("total = mean\n"), "mean")
    assert not _uses(ast.parse('"""mean is documented here"""\n'), "mean")


def test_difficulty_grows_with_lines_and_tests() -> None:
    assert [difficulty_of(5, 1), difficulty_of(12, 0), difficulty_of(20, 5)] == [
        "easy",
        "easy",
        "medium",
    ]
    assert [difficulty_of(30, 10), difficulty_of(41, 0)] == ["hard", "hard"]
