"""Constant arithmetic folded in the code detectors read."""

import ast
import os
from pathlib import Path

import pytest

from safeagents.detectors import _folding
from safeagents.detectors._folding import fold_constants, foldable_lines
from safeagents.detectors._python import parse


def _value(source: str) -> object:
    statement = fold_constants(ast.parse(source)).body[0]
    assert isinstance(statement, ast.Expr)
    node = statement.value
    return node.value if isinstance(node, ast.Constant) else ast.unparse(node)


def test_exports() -> None:
    assert sorted(_folding.__all__) == [
        "MAX_FOLDED_BITS",
        "MAX_FOLDED_CHARS",
        "fold_constants",
        "foldable_lines",
    ]


def test_powers_and_sums_are_folded() -> None:
    assert _value("10**6") == 1_000_000
    assert _value("10**12 + 5000") == 1_000_000_005_000
    assert _value("2 * 10**5 - 1") == 199_999
    assert _value("(10**9 + 7) % 1000") == 7
    assert _value("'.' * 40") == "." * 40


def test_what_is_not_small_and_exact_stays_as_written() -> None:
    assert _value("10**400") == "10 ** 400"
    assert _value("2**10**6") == "2 ** 1000000"  # the exponent folds, the power does not
    assert _value("n * 10**6") == "n * 1000000"
    assert _value("1 / 3") == "1 / 3"
    assert _value("5 // 0") == "5 // 0"
    assert _value("'ab' * 10**6") == "'ab' * 1000000"
    assert _value("'a' + 'b'") == "'a' + 'b'"
    assert _value("True + 1") == "True + 1"


def test_parse_folds_and_keeps_positions() -> None:
    source = "if (lo, hi) == (10**12, 10**12 + 5000):\n    pass\n"
    tree = parse(source)
    assert tree is not None
    test = tree.body[0]
    assert isinstance(test, ast.If)
    compared = test.test
    assert isinstance(compared, ast.Compare)
    right = compared.comparators[0]
    assert isinstance(right, ast.Tuple)
    assert [e.value for e in right.elts if isinstance(e, ast.Constant)] == [10**12, 10**12 + 5000]
    assert ast.get_source_segment(source, right.elts[1]) == "10**12 + 5000"


def test_hashes_compared_compare_what_they_hash() -> None:
    assert _value("hash((n, t)) == hash((10**6, 27))") == "(n, t) == (1000000, 27)"
    assert _value("hash(x) != hash('abc')") == "x != 'abc'"
    assert _value("hash(x) == 5") == "hash(x) == 5"
    assert _value("hash(x) < hash(y)") == "hash(x) < hash(y)"
    assert _value("hash(x, y) == hash(z)") == "hash(x, y) == hash(z)"


@pytest.mark.parametrize(
    "source",
    [
        "10**6",
        "(10**9 + 7) % 1000",
        "( 2 ) * ( 3 )",
        "(1 +  # one\n 2)",
        "1 + \\\n 2",
        "3 * r'ab'",
        "'-' * 40",
        "1_000 * 0xFF",
        "hash (x) == hash((1, 2))",
    ],
)
def test_the_gate_lets_every_foldable_text_through(source: str) -> None:
    lines = foldable_lines(source)
    assert lines
    assert ast.dump(fold_constants(ast.parse(source), lines)) != ast.dump(ast.parse(source))


@pytest.mark.parametrize("source", ["n + 1", "x1 * y", "f(a) - g(b)", "'a'.join(xs) * k"])
def test_the_gate_skips_text_with_nothing_to_fold(source: str) -> None:
    assert foldable_lines(source) == ()
    assert ast.dump(fold_constants(ast.parse(source))) == ast.dump(ast.parse(source))


def test_the_lines_name_where_a_fold_may_be() -> None:
    source = "a = 1\nb = (2 +\n     3)\nc = d\ne = 'x' * 4\n"
    assert foldable_lines(source) == (2, 3, 5)
    statements = fold_constants(ast.parse(source), (5,)).body
    assert [ast.unparse(s) for s in statements] == ["a = 1", "b = 2 + 3", "c = d", "e = 'xxxx'"]


_STDLIB = sorted(Path(os.__file__).parent.glob("*.py"), key=lambda p: -p.stat().st_size)[:15]


@pytest.mark.parametrize("path", _STDLIB, ids=lambda path: path.name)
def test_folding_only_the_lines_folds_what_the_whole_walk_folds(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    whole = ast.dump(fold_constants(ast.parse(source)))
    assert ast.dump(fold_constants(ast.parse(source), foldable_lines(source))) == whole
