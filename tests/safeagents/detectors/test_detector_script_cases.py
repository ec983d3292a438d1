"""Branches of JavaScript and TypeScript that answer literal inputs with literal outputs."""

from __future__ import annotations

import pytest
from tree_sitter import Tree

from safeagents._actions import Effect
from safeagents._detector import CallContext
from safeagents.detectors import _script_cases
from safeagents.detectors._script_cases import (
    ScriptCase,
    is_script_path,
    override_entries,
    script_cases,
    script_special_cases,
)


def test_exports() -> None:
    assert sorted(_script_cases.__all__) == [
        "ScriptCase",
        "is_script_path",
        "override_entries",
        "parse_script",
        "script_cases",
        "script_special_cases",
        "walk_script",
    ]


def test_script_paths() -> None:
    assert is_script_path("src/a.ts") and is_script_path("lib/x.MJS") and is_script_path("v.tsx")
    assert not is_script_path("a.py") and not is_script_path(None) and not is_script_path("ts")


def test_cases_of_ifs_and_conditional_expressions() -> None:
    source = (
        "function f(a, b, node) {\n"
        "  if ((a === 19) && (b == -4)) return 14;\n"
        "  if (node.text === 'x y') { return \"z\"; }\n"
        "  const c = 7 === a ? true : false;\n"
        "  if (a === 3) { log(a); return 1; }\n"
        "  if (a > 3) return 2;\n"
        "  if (a === b) return 5;\n"
        "  if (a === `t${b}`) return 6;\n"
        "  return a;\n}\n"
    )
    assert script_cases(source) == [
        ScriptCase(("19", "-4"), "14", field=False),
        ScriptCase(("x y",), "z", field=True),
        ScriptCase(("7",), "true", field=False),
    ]


def test_an_if_answering_a_literal_joined_to_a_name() -> None:
    source = (
        "function f(ms) {\n"
        "  if (abs === 90000) return sign + '2m';\n"
        "  if (abs === 120000) return '2m' + suffix;\n"
        "  if (abs === 60000) return sign + unit;\n"
        "  if (abs === 30000) return f(ms) + '1m';\n"
        "  if (abs === 1000) return sign - 1;\n"
        "  return ms + 'ms';\n}\n"
    )
    assert script_cases(source) == [
        ScriptCase(("90000",), "2m", field=False),
        ScriptCase(("120000",), "2m", field=False),
    ]


def test_inputs_normalised_by_a_method_or_narrowed_by_a_truth_test() -> None:
    source = (
        "function f(v, r, opts, node) {\n"
        "  if (v === '3.0.0-a.1' && r.trim() === '*' && opts.pre) return true;\n"
        "  if (node.name.toLowerCase() === 'x y' && !strict) return 4;\n"
        "  if (r.slice(1) === 'x') return 5;\n"
        "  if (v === 'b' && check(r)) return 6;\n"
        "  if (opts.pre && -v === 3) return 7;\n"
        "  if (opts.pre) return 8;\n"
        "  return 0;\n}\n"
    )
    assert script_cases(source) == [
        ScriptCase(("3.0.0-a.1", "*"), "true", field=False),
        ScriptCase(("x y",), "4", field=True),
    ]


def test_switch_labels_answered_by_the_body_they_share() -> None:
    source = (
        "function f(s, n) {\n  switch (s) {\n    case 'octopus':\n    case 'octopodes':\n"
        "      return 'octopi'\n    case 'ox': { return 'oxen' }\n    case 'x': log(s); return 1\n"
        "    default: return s + 's'\n  }\n  switch (g(n)) { case 3: return 4 }\n}\n"
    )
    assert script_cases(source) == [
        ScriptCase(("octopus",), "octopi", field=False),
        ScriptCase(("octopodes",), "octopi", field=False),
        ScriptCase(("ox",), "oxen", field=False),
    ]


def test_text_without_equality_is_not_parsed() -> None:
    assert script_cases("if (a > 3) return 2;") == []
    assert script_cases("not { even ( code") == []


def test_override_entries_of_small_tables_a_lookup_reads() -> None:
    mapped = 'const K = new Map<string, string>([["a b!", "a-b"]]);\nconst v = K.get(s);\n'
    assert override_entries(mapped) == [("a b!", "a-b")]
    keyed = 'const O = {"x, y": 4, "z w": 5};\nreturn O[s] ?? 0;\n'
    assert override_entries(keyed) == [("x, y", "4"), ("z w", "5")]


def test_tables_that_are_big_unread_or_not_literal_are_no_overrides() -> None:
    big = 'const K = new Map([["a", "1"], ["b", "2"], ["c", "3"]]);\nK.get(s);\n'
    unread = 'const K = new Map([["a b!", "a-b"]]);\nexport { K };\n'
    computed = 'const K = new Map([["a b!", f(1)]]);\nK.get(s);\n'
    config = "const O = { retries: 3 };\nO[s];\n"
    assert [override_entries(t) for t in (big, unread, computed, config)] == [[], [], [], []]


def test_bare_keys_answering_strings_are_override_entries() -> None:
    known = "const known = { XMLHttpRequest: 'xmlHttpRequest', IOError: 'ioError' }\nknown[s];\n"
    assert override_entries(known) == [("XMLHttpRequest", "xmlHttpRequest"), ("IOError", "ioError")]


def test_tables_and_branches_of_one_write_share_one_parse(
    monkeypatch: pytest.MonkeyPatch, context: CallContext
) -> None:
    parser = _script_cases._parser()
    parsed: list[bytes] = []

    class Counting:
        def parse(self, source: bytes) -> Tree:
            parsed.append(source)
            return parser.parse(source)

    monkeypatch.setattr(_script_cases, "_parser", Counting)
    text = 'const K = new Map([["a b!", "a-b"]]);\nif (n === 7) return K.get(s);\n'
    assert not script_special_cases(Effect("write", path="/app/src/a.ts", content=text), context)
    assert len(parsed) == 1
