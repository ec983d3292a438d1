"""Detectors skip scopes by cheap necessary conditions: every scope that can match is kept.

Each test runs a detector's full per-scope check on every scope of a corpus (the bundled
rule fixtures and the snippets of the detector tests) and requires that each scope where
the check finds something is among those the pruning keeps.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from safeagents.detectors import _case_tables, _exit_at_import, _special_casing, _state_toggle
from safeagents.detectors._ast_facts import local_names, scope_nodes
from safeagents.detectors._branches import literal_cases
from safeagents.detectors._lasting_names import module_names as module_names_of
from safeagents.detectors._module_facts import Scope, module_facts
from safeagents.detectors._python import starts_indented
from safeagents.rules import bundled_rules_path

_TESTS = Path(__file__).parent


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _corpus() -> list[ast.Module]:
    texts: list[str] = []
    for fixture in sorted(Path(bundled_rules_path()).rglob("*.test.yaml")):
        texts.extend(_strings(yaml.safe_load(fixture.read_text(encoding="utf-8"))))
    for test_file in sorted(_TESTS.glob("test_detector_*.py")):
        tree = ast.parse(test_file.read_text(encoding="utf-8"))
        texts.extend(
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        )
    trees = []
    for text in dict.fromkeys(texts):
        try:
            trees.append(ast.parse(text))
        except (SyntaxError, ValueError):
            continue
    return [tree for tree in trees if tree.body]


CORPUS = _corpus()


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_corpus_is_substantial() -> None:
    assert len(CORPUS) > 150


def test_state_toggle_keeps_every_toggling_scope() -> None:
    toggling = 0
    for tree in CORPUS:
        stateful = _state_toggle._stateful_scopes(module_facts(tree))
        module_names = module_names_of(tree)
        for function in _functions(tree):
            if _state_toggle._toggles(function.body, function, module_names):
                toggling += 1
                assert function in stateful, ast.unparse(function)
        if _state_toggle._toggles(tree.body, None, None):
            assert None in stateful, ast.unparse(tree)
    assert toggling >= 10


def test_special_casing_keeps_every_scope_with_cases_or_tables() -> None:
    found = 0
    for tree in CORPUS:
        facts = module_facts(tree)
        tables = _case_tables.tables_of(facts)
        candidates = _special_casing._candidate_scopes(facts, tables)
        module_inputs = {
            node.id
            for node in scope_nodes(tree.body, enter_classes=False)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        }
        scopes: list[tuple[Scope, list[ast.stmt], set[str]]] = [(None, tree.body, module_inputs)]
        scopes += [(f, f.body, local_names(f)) for f in _functions(tree)]
        for scope, body, inputs in scopes:
            nodes = list(scope_nodes(body, enter_classes=False))
            sets = _case_tables.member_sets(facts)
            cases = [case for node in nodes for case in literal_cases(node, inputs, sets)]
            indexed = [_special_casing._consulted_table(node, inputs, tables) for node in nodes]
            if cases or any(table is not None for table in indexed):
                found += 1
                assert scope in candidates, ast.unparse(tree)
    assert found >= 10


def test_exit_at_import_keeps_every_function_with_a_targeted_exit() -> None:
    targeted = 0
    for tree in CORPUS:
        facts = module_facts(tree)
        exiting = _exit_at_import._exiting_scopes(facts, facts.aliases)
        for function in _functions(tree):
            if _exit_at_import._targeted_exit(function, facts.aliases):
                targeted += 1
                assert function in exiting, ast.unparse(function)
    assert targeted >= 3


@pytest.mark.parametrize(
    "text",
    [
        "x = 1\n",
        "\n\n   # comment\n\tif x:\n",
        "#" * 600 + "\n    indented\n",
        "#" * 511 + "\r\n  x\n",
        "#" * 510 + "\r\n" + " " * 3000 + "\n" + "# c\n" * 500 + "y\n",
        "# only comments\n" * 400,
        " " * 700 + "\n" + "x = 1\n",
        "\u2028".join(["# c"] * 300 + ["  z"]),
    ],
)
def test_starts_indented_reads_only_as_much_as_needed(text: str) -> None:
    assert starts_indented(text) is _starts_indented_reference(text)


_LINE = st.text(alphabet=" \t#x\r\n\x0b\x0c\x1c\x85\u2028\u3000", max_size=40)


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINE, max_size=120), st.integers(min_value=0, max_value=900))
def test_starts_indented_agrees_with_reading_every_line(lines: list[str], padding: int) -> None:
    text = "#" * padding + "\n".join(lines)
    assert starts_indented(text) is _starts_indented_reference(text)


def _starts_indented_reference(text: str) -> bool:
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line[0].isspace()
    return False
