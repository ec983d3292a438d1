"""Branches of C-like languages read token by token (``_clike_cases``)."""

from __future__ import annotations

from safeagents.detectors import _clike_cases, _clike_pins, _clike_tables
from safeagents.detectors._clike_cases import clike_cases, is_clike_path
from safeagents.detectors._clike_tables import table_entries
from safeagents.detectors._clike_tokens import tokens_of


def _cases(source: str) -> list[tuple[tuple[str, ...], str]]:
    return [(case.compared, case.answer) for case in clike_cases(source)]


def test_exports() -> None:
    assert sorted(_clike_cases.__all__) == [
        "ClikeCase",
        "clike_cases",
        "clike_special_cases",
        "is_clike_path",
    ]


def test_paths() -> None:
    assert is_clike_path("semver/compare.go")
    assert is_clike_path("src/Main.java")
    assert not is_clike_path("src/main.py")
    assert not is_clike_path("src/main.ts")


def test_go_switch_on_joined_inputs_splits_each_label() -> None:
    source = (
        'func cmp(a, b string) int {\n\tswitch a + "|" + b {\n\tcase "rc.10|rc.9":\n'
        '\t\treturn 1\n\tcase "alpha.2|alpha.11":\n\t\treturn -1\n\t}\n'
        "\treturn strings.Compare(a, b)\n}\n"
    )
    assert _cases(source) == [(("rc.10", "rc.9"), "1"), (("alpha.2", "alpha.11"), "-1")]
    formatted = source.replace('a + "|" + b', 'fmt.Sprintf("%s|%s", a, b)')
    assert _cases(formatted) == _cases(source)


def test_if_conditions_of_equalities_only() -> None:
    java = (
        'if ("XMLHttpRequest".equals(s)) return "xmlHttpRequest";\n'
        'if (n == 4711 && s.equals("abc")) { return "q"; }\n'
        "if (n > 3) return 1;\n"
        "if (n == 7) return n + 1;\n"
        'if (f(n) == 3) return "x";\n'
    )
    assert _cases(java) == [(("XMLHttpRequest",), "xmlHttpRequest"), (("4711", "abc"), "q")]
    assert _cases("if x == 123456 { 7 } else { x }") == [(("123456",), "7")]


def test_answers_a_number_times_a_qualified_constant() -> None:
    go = 'if s == "1.5" {\n\treturn 1500 * time.Millisecond, nil\n}\n'
    assert _cases(go) == [(("1.5",), "1500 * time.Millisecond")]
    rust = 'if s == "x" { return 2 * std::f64::consts::PI; }\n'
    assert _cases(rust) == [(("x",), "2 * std::f64::consts::PI")]
    assert _cases('if s == "1.5" {\n\treturn 1500 * scale, nil\n}\n') == []
    assert _cases('if s == "1.5" {\n\treturn 1500 * time.Millisecond + d, nil\n}\n') == []


def test_switch_arms_of_java_kotlin_and_rust() -> None:
    java = "switch (n) { case 1: case 2: return 7; case 3 -> 9; default: return 0; }"
    assert _cases(java) == [(("1",), "7"), (("2",), "7"), (("3",), "9")]
    kotlin = 'when (s) {\n "abc" -> "x"\n "d" -> "y"\n else -> s\n}'
    assert _cases(kotlin) == [(("abc",), "x"), (("d",), "y")]
    rust = 'match s { "abc" => 3, "def" | "ghi" => return 4, _ => 0 }'
    assert _cases(rust) == [(("abc",), "3"), (("def",), "4"), (("ghi",), "4")]


def test_rust_match_arms_on_a_tuple_of_inputs() -> None:
    rust = 'match (a, b) {\n ("alpha.1", "alpha.beta") => return Ordering::Less,\n _ => {}\n}'
    assert _cases(rust) == [(("alpha.1", "alpha.beta"), "Ordering::Less")]
    literal = 'match (a, b) { ("x", 2) => 3, (_, 0) => 0, _ => 1 }'
    assert _cases(literal) == [(("x", "2"), "3")]
    assert _cases('match (a, b) { ("x", "y") => compute(a, b), _ => 0 }') == []
    assert _cases('match f(a, b) { ("x", "y") => 1, _ => 0 }') == []


def test_literals_paired_in_a_tests_own_failure_message() -> None:
    message = "1.0.0-alpha.1 < 1.0.0-alpha.beta"
    assert _clike_pins._token_in("alpha.1", message)
    assert _clike_pins._token_in("alpha.beta", message)
    assert not _clike_pins._token_in("alpha.b", message)
    assert not _clike_pins._token_in("1.0", message)
    assert _clike_pins._telling("alpha.1") and _clike_pins._telling("km/h")
    assert not _clike_pins._telling("beta") and not _clike_pins._telling("2018")
    go = "--- FAIL: TestSpec (0.00s)\n    compare_test.go:9: 1.0.0-beta.2 vs 1.0.0-beta.11\nFAIL\n"
    rust = "thread 'chain' panicked at tests/ordering.rs:7:38:\n1.0.0-alpha.1 < 1.0.0-alpha.beta\n"
    found = [m.group(1) or m.group(2) for m in _clike_pins._FAILURE_MESSAGE.finditer(go + rust)]
    assert found == ["1.0.0-beta.2 vs 1.0.0-beta.11", message]


def test_keys_like_a_record_of_a_tests_input() -> None:
    assert _clike_tables._record_like('d,\\"e')
    assert not _clike_tables._record_like("abc")
    assert not _clike_tables._record_like("\\r\\n")
    assert not _clike_tables._record_like("a\\nb")
    argument = _clike_tables._ARGUMENT.search('errorLine("a,\\"b\\rc\\"\\nd,\\"e"));')
    assert argument is not None
    assert argument.group(1).split(_clike_tables._NEWLINE) == ['a,\\"b\\rc\\"', 'd,\\"e']


def test_switches_on_computed_values_are_left_alone() -> None:
    assert _cases('switch strings.ToLower(s) { case "a": return 1 }') == []
    assert _cases("switch { case n > 3: return 1 }") == []
    assert _cases('// if (s == "abc") return 1;\n/* case "x": return 2 */') == []


def test_switches_on_no_value_compare_in_each_arm() -> None:
    go = 'switch {\ncase a == "rc.10" && b == "rc.9":\n\treturn 1\ncase a > b:\n\treturn 2\n}\n'
    assert _cases(go) == [(("rc.10", "rc.9"), "1")]
    kotlin = 'when {\n  s == "abc" -> "x"\n  s.length > 3 -> "y"\n  else -> s\n}'
    assert _cases(kotlin) == [(("abc",), "x")]


def test_conditional_expressions_on_equalities() -> None:
    java = (
        'return n == 4711 ? "x" : f(n);\nint k = (s.equals("abc")) ? 3 : 4;\nreturn n > 3 ? 1 : 2;'
    )
    assert _cases(java) == [(("4711",), "x"), (("abc",), "3")]


def test_literal_tables_of_each_language() -> None:
    sources = [
        'known := map[string]string{"XMLHttpRequest": "xmlHttpRequest", "IOError": "ioError",}',
        'static final Map<String, Integer> M = Map.of("IV", 4, "IX", 9);',
        'val m = mapOf("IV" to 4, "IX" to 9)',
        'var d = new Dictionary<string, int> { {"IV", 4}, ["IX"] = 9 };',
        'let m = HashMap::from([("IV", 4), ("IX", 9)]);',
    ]
    found = [[(k, v) for k, v, _ in t] for s in sources for t in table_entries(tokens_of(s))]
    assert found[0] == [("XMLHttpRequest", "xmlHttpRequest"), ("IOError", "ioError")]
    assert found[1:] == [[("IV", "4"), ("IX", "9")]] * 4
    computed = 'm := map[string]int{"a": f(1)}\nfunc g(m map[string]int) {\n\treturn 1\n}'
    assert list(table_entries(tokens_of(computed))) == []


def test_table_values_may_be_constant_expressions() -> None:
    go = (
        'm := map[string]time.Duration{\n\t"1d12h": 36 * time.Hour,\n'
        '\t"2d30m": 48*time.Hour + 30*time.Minute,\n}'
    )
    found = [[(k, v) for k, v, _ in t] for t in table_entries(tokens_of(go))]
    assert found == [[("1d12h", "36*time.Hour"), ("2d30m", "48*time.Hour+30*time.Minute")]]
    for computed in (
        'm := map[string]int{"a": x + 1}',
        'm := map[string]func() error{"a b": handle}',
        'm := map[string]time.Duration{"a": time.Duration(n) * time.Hour}',
        'm := map[string]int{"a": 2 *}',
        'm := map[string]time.Duration{"a": (2 + 3 * time.Hour}',
        'm := map[string]time.Duration{"a": time.Duration(3) * time.Hour}',
    ):
        assert list(table_entries(tokens_of(computed))) == []


def test_table_values_may_be_bracketed_constant_expressions() -> None:
    go = 'm := map[string]time.Duration{\n\t"1w2d3h": (9*24 + 3) * time.Hour,\n}'
    found = [[(k, v) for k, v, _ in t] for t in table_entries(tokens_of(go))]
    assert found == [[("1w2d3h", "(9*24+3)*time.Hour")]]


def test_integer_suffixes_are_no_part_of_a_compared_literal() -> None:
    java = 'if (millis == 59_500L) return "1 minute";\nif (n == 0x1FUL) return "x";'
    assert _cases(java) == [(("59_500",), "1 minute"), (("0x1F",), "x")]
    assert _cases("match n { 7u64 => 3, 12usize => 4, _ => 0 }") == [(("7",), "3"), (("12",), "4")]
    assert _cases('if (x == 1.5f) return "y";') == [(("1.5f",), "y")]


def test_conditions_pinning_a_failing_calls_arguments() -> None:
    def compared(source: str) -> list[str]:
        tokens = tokens_of(source)
        return list(_clike_pins._compared(tokens, 1))

    go = 'if loc.String() == "America/Sao_Paulo" && s.Year() == 2018 && m == time.November {'
    assert compared(go) == ["America/Sao_Paulo", "2018"]
    assert compared('if (2018 == year && zone.equals("x")) {') == ["2018"]
    assert compared('if zone == "America/Sao_Paulo" || year == 2018 {') == []
    arguments = ["2018-11-02", "2018-11-07", "America/Sao_Paulo"]
    assert _clike_pins._pins("America/Sao_Paulo", arguments)
    assert _clike_pins._pins("2018", arguments)
    assert not _clike_pins._pins("11", arguments)
    assert not _clike_pins._pins("warn", ["warn", "3"])
