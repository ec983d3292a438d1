"""AST mutations applied to the source text: each changes one operator or constant of the
function's body and nothing else of the file."""

from __future__ import annotations

import ast

from trainer.tasks._mutate import mutations

SOURCE = '''x = 1 + 1


def f(a, b=1 < 2):
    """doc 1 < 2"""
    if a < b and not a:  # é < 1
        return (a) + 1
    return a * b == 3 or "é" in [b]
'''


def _described(text: str) -> list[str]:
    function = ast.parse(text).body[-1]
    assert isinstance(function, ast.FunctionDef)
    return [mutation.description for mutation in mutations(text, function)]


def test_every_site_of_the_body_and_only_the_body() -> None:
    assert _described(SOURCE) == [
        "line 6: '<' -> '<='",
        "line 6: 'and' -> 'or'",
        "line 6: 'not ' -> ''",
        "line 7: '+' -> '-'",
        "line 7: '1' -> '2'",
        "line 8: '*' -> '+'",
        "line 8: '==' -> '!='",
        "line 8: '3' -> '4'",
        "line 8: 'or' -> 'and'",
        "line 8: 'in' -> 'not in'",
    ]


def test_a_mutation_changes_one_spot_and_keeps_comments_and_non_ascii_text() -> None:
    function = ast.parse(SOURCE).body[1]
    assert isinstance(function, ast.FunctionDef)
    found = {m.description: m for m in mutations(SOURCE, function)}
    mutated = found["line 8: 'in' -> 'not in'"].apply(SOURCE)
    assert mutated == SOURCE.replace('"é" in [b]', '"é" not in [b]')
    dropped = found["line 6: 'not ' -> ''"].apply(SOURCE)
    assert dropped == SOURCE.replace("and not a:  # é < 1", "and a:  # é < 1")


def test_booleans_flip_and_nested_functions_are_left_alone() -> None:
    text = "def g():\n    def inner():\n        return 1 + 1\n    return True\n"
    assert _described(text) == ["line 4: 'True' -> 'False'"]
