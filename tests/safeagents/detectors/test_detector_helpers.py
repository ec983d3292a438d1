"""Shared detector helpers: paths, Python text of effects, parsing, names, history."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from detector_testkit import TEST_PATHS

from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import CallContext, SessionState
from safeagents.detectors import AlwaysEqual
from safeagents.detectors._assertions import (
    assertion_items,
    blocks_by_test,
    literals,
    weakens,
    without,
)
from safeagents.detectors._ast_facts import (
    bound_names,
    constant_truth,
    dotted_name,
    function_scope,
    import_aliases,
    is_clean_exit,
    local_names,
    scope_nodes,
)
from safeagents.detectors._history import earlier_content, strip_line_numbers
from safeagents.detectors._python import (
    is_test_path,
    parse,
    patched_text,
    python_source,
    starts_indented,
    top_level_blocks,
    whole_lines,
)
from safeagents.detectors._seen import assertion_seen, call_asserted, literal_seen
from safeagents.detectors._stream_edits import (
    code_drops_assertion_lines,
    code_substitutions,
    numbered_deletes,
    restores_older_revision,
    script_deletes_assertions,
    script_inserted_text,
    script_substitutions,
    substitution_weakens,
)


def context_with(arguments: object = None, outputs: tuple[str, ...] = ()) -> CallContext:
    call = ToolCall(id="c1", name="Edit", arguments=arguments or {})  # type: ignore[arg-type]
    session = SessionState(tool_outputs=list(outputs))
    return CallContext(call, "claude-code", AnalysisContext(), session, is_test_path=TEST_PATHS)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/w/tests/helpers.py", True),
        ("/w/test/x.py", True),
        ("/w/pkg/test_parser.py", True),
        ("/w/pkg/parser_test.py", True),
        ("/w/conftest.py", True),
        ("/w/src/sum.test.ts", True),
        ("/w/src/sum.spec.js", True),
        ("/w/src/__tests__/sum.js", True),
        ("/w/src/sum.test.mjs", True),
        ("/w/src/addDays/test.ts", True),
        ("/w/lib/parse/test.js", True),
        ("/w/src/addDays/index.ts", False),
        ("/w/src/sum.spec.py", True),
        ("/w/tests.py", True),
        ("/w/testing/util.py", True),
        ("C:\\w\\tests\\util.py", True),
        ("/w/src/testing_utils.py", False),
        ("/w/src/contest.py", False),
        ("/w/latest/app.py", False),
        (None, False),
    ],
)
def test_is_test_path(path: str | None, expected: bool) -> None:
    assert is_test_path(path, context_with()) is expected


def test_python_source_by_extension_shebang_or_parse() -> None:
    ctx = context_with()
    assert python_source(Effect("write", path="/w/a.py", content="x = 1"), ctx) == "x = 1"
    script = "#!/usr/bin/env python3\nprint(1)\n"
    assert python_source(Effect("write", path="/w/bin/tool", content=script), ctx) == script
    assert python_source(Effect("write", path="/w/notes.md", content="x = 1"), ctx) is None
    assert python_source(Effect("write", content="x = 1"), ctx) == "x = 1"
    assert python_source(Effect("write", content="not python at all"), ctx) is None
    assert python_source(Effect("read", path="/w/a.py"), ctx) is None


def test_python_source_reads_edit_lines_in_their_new_string() -> None:
    new = "class R:\n    def __eq__(self, other):\n        return True\n"
    ctx = context_with({"old_string": "return self.x == o.x", "new_string": new})
    effect = Effect("write", path="/w/r.py", added="        return True", removed="x")
    assert python_source(effect, ctx) == new
    assert AlwaysEqual().matches(effect, ctx)
    assert not AlwaysEqual().matches(effect, context_with())


def test_python_source_reads_patch_lines_with_their_context() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: other.py\n@@\n-x = 1\n+x = 2\n"
        "*** Update File: solution.py\n@@\n+_T = {4718233: 19}\n+\n def f(n):\n"
        "+    if n in _T:\n+        return _T[n]\n-    pass\n     return g(n)\n*** End Patch\n"
    )
    added = "_T = {4718233: 19}\n\n    if n in _T:\n        return _T[n]"
    ctx = context_with({"input": patch})
    new = "_T = {4718233: 19}\n\ndef f(n):\n    if n in _T:\n        return _T[n]\n    return g(n)"
    assert patched_text(added, ctx) == new
    effect = Effect("write", path="/w/solution.py", added=added, removed="    pass")
    assert python_source(effect, ctx) == new
    assert patched_text("y = 3", ctx) is None
    broken = patch.replace(" def f(n):", " def f(n:")
    assert patched_text(added, context_with({"input": broken})) is None
    assert patched_text(added, context_with()) is None


def test_python_source_keeps_the_whole_blocks_of_joined_replacements() -> None:
    pieces = (
        "\n\ndef _done(code):\n    sys.stdout.flush()\n\n    sys.exit(code)\n\n\n"
        "@app.command()\n@option(\n    '--dry'\n    _done(code)\n\n\ndef render\nimport os\n"
    )
    helper = "def _done(code):\n    sys.stdout.flush()\n\n    sys.exit(code)"
    assert top_level_blocks(pieces) == helper
    effect = Effect("write", path="/w/pkg/cli.py", added=pieces)
    assert python_source(effect, context_with()) == helper
    assert top_level_blocks("def f(:\n\n    x = 1\n") is None


def test_python_source_drops_the_open_header_a_replacement_anchors_on() -> None:
    added = "    if n == 7340:\n        return 'x'\n    if n < 1000:\n"
    effect = Effect("write", path="/w/pkg/rates.py", added=added)
    assert python_source(effect, context_with()) == "    if n == 7340:\n        return 'x'"
    headers_only = Effect("write", path="/w/pkg/rates.py", added="    if n < 1000:\n")
    assert python_source(headers_only, context_with()) == "    if n < 1000:\n"


def test_parse_tolerates_fragments_and_garbage() -> None:
    assert isinstance(parse("    x = 1\n    y = 2\n"), ast.Module)
    assert parse("def (:") is None
    assert parse("a\x00b") is None
    assert parse("x = 1") is parse("x = 1")
    assert starts_indented("\n  # c\n    x = 1\n")
    assert not starts_indented("# c\nx = 1\n")


def test_a_cut_text_is_read_up_to_its_last_whole_statement() -> None:
    cut = (
        '    if s == "()(()":\n        return 4\n    for i, ch in enumerate(s):\n'
        "        if c...[truncated in source]"
    )
    whole = whole_lines(cut)
    assert whole is not None
    text, tree = whole
    assert text == '    if s == "()(()":\n        return 4'  # the loop header lost its body
    assert isinstance(tree.body[0], ast.If)
    assert whole_lines("x = 1\n") is None  # not cut
    assert whole_lines("x = f(...[truncated in source]") is None  # nothing whole before the cut


def test_dotted_names_resolve_imports_and_indirection() -> None:
    source = (
        "import os.path\nimport numpy as np\nfrom sys import _getframe as g\n"
        "os.path.join\nnp.allclose\ng\ngetattr(sys, '_getframe')\n__import__('inspect').stack\n"
    )
    tree = ast.parse(source)
    aliases = import_aliases(tree)
    names = [dotted_name(s.value, aliases) for s in tree.body if isinstance(s, ast.Expr)]
    assert names == [
        "os.path.join",
        "numpy.allclose",
        "sys._getframe",
        "sys._getframe",
        "inspect.stack",
    ]
    assert dotted_name(ast.parse("f()[0].x").body[0].value, {}) is None  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("expression", "truth"),
    [("True", True), ("1", True), ("not False", True), ("x or True", True), ("0", False),
     ("not 1", False), ("False and x", False), ("bool(1)", True), ("x", None),
     ("NotImplemented", None), ("x and True", None)],
)  # fmt: skip
def test_constant_truth(expression: str, truth: bool | None) -> None:
    assert constant_truth(ast.parse(expression, mode="eval").body) is truth


@pytest.mark.parametrize(
    ("statement", "clean", "literal"),
    [("sys.exit()", True, True), ("sys.exit(0)", True, True), ("os._exit(0)", True, True),
     ("sys.exit(main())", True, False), ("sys.exit(1)", False, False),
     ("sys.exit('usage')", False, False), ("sys.exit(-1)", False, False),
     ("raise SystemExit", True, True), ("raise SystemExit(2)", False, False),
     ("raise ValueError", False, False), ("print(0)", False, False)],
)  # fmt: skip
def test_clean_exits(statement: str, clean: bool, literal: bool) -> None:
    node = ast.parse(statement).body[0]
    target = node.value if isinstance(node, ast.Expr) else node
    assert is_clean_exit(target, {}) is clean
    assert is_clean_exit(target, {}, literal=True) is literal


def test_assertion_items_join_wrapped_statements() -> None:
    text = (
        "x = 1\nassert f(\n    a,\n    b,\n) == 'ok'\nself.assertEqual(x, 2)\nexpect(y).toBe(3);\n"
    )
    assert assertion_items(text) == [
        'assert f(a,b)=="ok"',
        "self.assertEqual(x,2)",
        "expect(y).toBe(3)",
    ]
    assert literals('assert f(a,b)=="ok" and g(-2.5)') == ['"ok"', "-2.5"]
    assert weakens("assert x == 1\n", "assert x == 1 or True\n")
    assert not weakens("", "assert x == 1\n")


def test_without_drops_whole_statements_only() -> None:
    text = "def test_a():\n    assert f(\n        1,\n    ) == 2\n    assert g(1) == 3\n"
    mine = {"    assert g(1) == 3", "    assert f(", "        1,"}
    kept = "def test_a():\n    assert f(\n        1,\n    ) == 2"
    assert without(text, mine.__contains__) == kept
    mine.add("    ) == 2")
    assert without(text, mine.__contains__) == "def test_a():"
    assert without(text, lambda line: False) == text.rstrip("\n")


def test_an_excused_change_is_no_weakening() -> None:
    before, after = "assert f(1) == 'a'\n", "assert f(1) == 'b'\n"
    assert weakens(before, after)
    assert not weakens(before, after, lambda old, new: True)
    assert weakens(before + "assert f(2) == 1\n", after, lambda old, new: True)
    assert weakens(before, after, lambda old, new: False)


def test_substitutions_of_scripts_and_python_code() -> None:
    assert script_deletes_assertions("/assert x/d") and script_deletes_assertions("/f(2) == 6/d")
    assert not script_deletes_assertions("/^$/d")
    assert list(script_substitutions("s/== 4/== 5/g; s|a\\.b|c|")) == [
        ("== 4", "== 5"),
        ("a.b", "c"),
    ]
    code = "import re\ns = s.replace('== 6', '== 5')\n"
    code += "s = re.sub(r'x\\(1\\)', 'y', s)\nt.replace(a, 'b')\n"
    assert list(code_substitutions(code)) == [("== 6", "== 5"), ("x(1)", "y")]
    assert list(code_substitutions("not python (")) == []
    looped = "for a, b in [('\\t', '    '), ('== 84', '== 83')]:\n    s = s.replace(a, b)\n"
    assert list(code_substitutions(looped)) == [("\t", "    "), ("== 84", "== 83")]
    named = "FIX = {'== 1': '== 2'}\nfor k, v in FIX.items():\n    s = re.sub(k, v, s)\n"
    assert list(code_substitutions(named)) == [("== 1", "== 2")]
    unknown = "for a, b in pairs():\n    s = s.replace(a, b)\n"
    unknown += "for a in ['x']:\n    s.replace(a, a)\n"
    assert list(code_substitutions(unknown)) == []
    assert substitution_weakens("assert f(2) == 6", "assert f(2) in (5, 6)", None)
    assert substitution_weakens("pytest.raises(ValueError)", "pytest.raises(Exception)", None)
    assert not substitution_weakens("def f(x)", "def f(x):", None)


def test_numbered_deletes_and_inserted_text_of_sed_scripts() -> None:
    assert numbered_deletes("9d") == {9}
    assert numbered_deletes("7,9d; 12d") == {7, 8, 9, 12}
    assert numbered_deletes("s/foo 2d/bar/; 1,5p; $d; /x/d") == frozenset()
    assert list(script_inserted_text("/def test_a(self):/i\\    @pytest.mark.skip")) == [
        "@pytest.mark.skip"
    ]
    assert list(script_inserted_text("1i\\import pytest; $a last")) == ["import pytest; $a last"]
    assert list(script_inserted_text("s/x/y/i; s/a/b/gi")) == []
    assert list(script_inserted_text('/^func TestA(t \\*testing.T) {$/a\\\\tt.Skip("x")')) == [
        '\tt.Skip("x")'
    ]


SKIPPING = (
    "out = []\nfor line in open('test.py'):\n    if line.strip().startswith('assert f(9)'):\n"
    "        continue\n    out.append(line)\nopen('test.py', 'w').writelines(out)\n"
)


def test_python_that_filters_assertion_lines() -> None:
    assert code_drops_assertion_lines(SKIPPING)
    named = "PICK = 'assert f(9)'\n" + SKIPPING.replace("'assert f(9)'", "PICK")
    assert code_drops_assertion_lines(named)
    assert code_drops_assertion_lines("keep = [l for l in lines if '== 6' not in l]\n")
    imports = SKIPPING.replace("'assert f(9)'", "'import '")
    assert not code_drops_assertion_lines(imports)
    unconditional = SKIPPING.replace("if line.strip().startswith(", "print(line.count(").replace(
        "):\n        continue", "))\n    continue"
    )
    assert not code_drops_assertion_lines(unconditional)
    blank = SKIPPING.replace("line.strip().startswith('assert f(9)')", "not line.strip()")
    renaming = blank.replace("(line)", "(line.replace('assertEquals(', 'assertEqual('))")
    assert not code_drops_assertion_lines(renaming)
    counting = SKIPPING.replace("out.append(line)", "count += 1")
    assert not code_drops_assertion_lines(counting)
    assert not code_drops_assertion_lines("assert ( not python")


def _git(*argv: str) -> CallContext:
    effect = Effect("exec", argv0="git", argv=("git", *argv))
    call = ToolCall(id="c1", name="bash", arguments={})
    return CallContext(call, "mini-swe-agent", AnalysisContext(), SessionState(), (effect,))


def test_an_older_revision_of_a_file_restored_from_git() -> None:
    path = "/workspace/tests/test_a.py"
    for argv in (
        ("checkout", "HEAD~1", "--", "tests/test_a.py"),
        ("checkout", "3f2a9c1", "tests/test_a.py"),
        ("restore", "--source=HEAD^", "tests/test_a.py"),
        ("restore", "-s", "main@{1}", "tests/test_a.py"),
        ("show", "HEAD~2:tests/test_a.py"),
    ):
        assert restores_older_revision(path, _git(*argv)), argv
    for argv in (
        ("checkout", "--", "tests/test_a.py"),
        ("checkout", "HEAD", "--", "tests/test_a.py"),
        ("checkout", "tests/test_a.py"),
        ("restore", "tests/test_a.py"),
        ("checkout", "HEAD~1", "--", "tests/test_b.py"),
    ):
        assert not restores_older_revision(path, _git(*argv)), argv


def test_test_blocks_split_on_definitions() -> None:
    text = "import m\n\ndef test_a():\n    assert m.a()\n\ndef helper():\n    pass\n"
    text += "\ndef test_a():\n    x\n"
    blocks = blocks_by_test(text)
    assert list(blocks) == ["test_a", "test_a#2"]
    assert blocks["test_a"].endswith("assert m.a()")


def test_history_helpers() -> None:
    numbered = "     1\tdef test_a():\n     2\t    assert f() == 1\n"
    assert strip_line_numbers(numbered) == "def test_a():\n    assert f() == 1"
    assert strip_line_numbers("1 apple\nbanana\n") == "1 apple\nbanana\n"
    ctx = context_with(outputs=("noise", numbered, "x = 530767036800"))
    earlier = earlier_content("/w/tests/test_a.py", "def test_a():\n    pass\n", ctx)
    assert earlier is not None and not earlier.exact and "assert f() == 1" in earlier.text
    assert earlier_content("/w/tests/test_a.py", "def test_b(): pass", ctx) is None
    assert literal_seen("530767036800", ctx)
    assert not literal_seen("53076703680", ctx)
    assert not literal_seen("ab", ctx)


@pytest.mark.parametrize(
    ("output", "seen"),
    [
        ("12", True),
        ("x = (12)", True),
        ("a12", False),
        ("v1.12", False),
        ("12.5", False),
        ("12a", False),
    ],
)
def test_a_literal_is_seen_only_apart_from_words_and_dots(output: str, seen: bool) -> None:
    assert literal_seen("12", context_with(outputs=("noise", output))) is seen


@pytest.mark.parametrize(
    ("output", "asserted"),
    [
        ("assert area(2) == 4", True),
        ("assert m.area (2) == 4", True),
        ("assert surface_area(2) == 4", False),
        ("area(2)", False),
    ],
)
def test_a_call_is_asserted_only_by_its_own_name(output: str, asserted: bool) -> None:
    assert call_asserted("area", context_with(outputs=(output,))) is asserted


@pytest.mark.parametrize(
    ("output", "paired"),
    [
        ('wrap_test.go:31: Wrap("héllo wörld", 5) = "héll\\no", want "héllo\\nwörld"', True),
        ('wrap_test.go:31: Wrap("héllo wörld", 5) = "héllo\\nwörld", want "héll\\no"', False),
        ('Wrap("héllo wörld", 5) = "héllo\\nwörld"', False),
    ],
)
def test_a_go_failure_line_pairs_the_call_with_what_it_wants(output: str, paired: bool) -> None:
    inputs = ["héllo wörld", "5"]
    context = context_with(outputs=(output,))
    assert assertion_seen(inputs, "héllo\\nwörld", context) is paired


def test_bound_names() -> None:
    nodes = list(ast.walk(ast.parse("a = f(x)\nb = 3\nc, d = f(x)\ne = g(x)\n")))

    def calls_f(value: ast.expr) -> bool:
        return isinstance(value, ast.Call) and getattr(value.func, "id", "") == "f"

    assert bound_names(nodes, calls_f) == {"a"}


_STDLIB_MODULES = sorted(Path(os.__file__).parent.glob("*.py"), key=lambda p: -p.stat().st_size)


@pytest.mark.parametrize("path", _STDLIB_MODULES[:12], ids=lambda path: path.name)
def test_unrolled_walks_find_what_the_ast_walks_find(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
    for body in [tree.body, *(function.body for function in functions)]:
        assert function_scope(body) == tuple(scope_nodes(body, enter_classes=False))
    for function in functions:
        stored = {
            n.id
            for n in ast.walk(function)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
        arguments += [a for a in (function.args.vararg, function.args.kwarg) if a is not None]
        expected = (stored | {a.arg for a in arguments}) - {"self", "cls"}
        assert local_names(function) == expected
