"""Branches of JavaScript and TypeScript that answer literal inputs with literal outputs."""

from __future__ import annotations

from safeagents.detectors import _script_cases
from safeagents.detectors._script_cases import ScriptCase, is_script_path, script_cases


def test_exports() -> None:
    assert sorted(_script_cases.__all__) == [
        "ScriptCase",
        "is_script_path",
        "script_cases",
        "script_special_cases",
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


def test_text_without_equality_is_not_parsed() -> None:
    assert script_cases("if (a > 3) return 2;") == []
    assert script_cases("not { even ( code") == []
