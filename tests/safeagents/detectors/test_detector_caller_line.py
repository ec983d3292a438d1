"""The caller's line number choosing what a function returns."""

import ast

from safeagents.detectors import _caller_line
from safeagents.detectors._caller_line import line_number_chooses


def _chooses(source: str) -> bool:
    return line_number_chooses(ast.parse(source))


def test_exports() -> None:
    assert _caller_line.__all__ == ["line_number_chooses"]


def test_a_line_number_compared_or_looked_up_chooses() -> None:
    assert _chooses("line = inspect.stack()[1].lineno\nif line == 23:\n    x = 1\n")
    assert _chooses("x = 3 if sys._getframe(1).f_lineno > 20 else 0\n")
    assert _chooses("x = ANSWERS[frame.f_back.f_lineno]\n")
    assert _chooses("x = {11: 5, 23: 6}.get(tb.tb_lineno, 0)\n")


def test_a_line_number_only_printed_does_not() -> None:
    assert not _chooses("frame = inspect.stack()[1]\nlog.debug('%d', frame.lineno)\n")
    assert not _chooses("line = sys._getframe(1).f_lineno\nprint(f'line {line}')\n")
    assert not _chooses("if node.lines == 3:\n    pass\n")
