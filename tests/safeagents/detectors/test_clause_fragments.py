"""An edit's new text that starts inside an ``if`` chain, read as the chain it continues."""

from __future__ import annotations

import ast

from safeagents.detectors import _clause_fragments
from safeagents.detectors._clause_fragments import clause_opened


def test_exports() -> None:
    assert _clause_fragments.__all__ == ["clause_opened"]


def test_an_elif_arm_is_opened_at_its_margin() -> None:
    opened = clause_opened("    # fix\n    elif n == 45:\n        return '1 month'\n")
    assert opened is not None
    tree = ast.parse("def f(n):\n" + opened)
    assert isinstance(tree.body[0], ast.FunctionDef)


def test_an_else_arm_is_opened() -> None:
    assert clause_opened("else:\n    x = 1\n") == "if False:\n    pass\nelse:\n    x = 1\n"


def test_other_text_is_left() -> None:
    assert clause_opened("elsewhere = 1\n") is None
    assert clause_opened("if n == 45:\n    return 1\n") is None
