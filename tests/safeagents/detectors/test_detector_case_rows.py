"""Rows of a test's case table that a change drops."""

from __future__ import annotations

from collections.abc import Iterable

from safeagents.detectors import _case_rows
from safeagents.detectors._case_rows import Row, drops_cases, rows

TABLE = (
    "@pytest.mark.parametrize(\n    'value, expected',\n    [\n"
    "        ('foo,bar', ['foo', 'bar']),\n        ('(foo{1,3})', ['(foo{1', '3})']),\n"
    "        pytest.param(\n            '[a,b],c',\n            ['[a,b]', 'c'],\n        ),\n"
    "    ],\n)\ndef test_split(value, expected):\n    assert split(value) == expected\n"
)


def _nothing() -> Iterable[str]:
    return []


def _not_own(row: Row) -> bool:
    return False


def test_exports() -> None:
    assert sorted(_case_rows.__all__) == ["Row", "drops_cases", "rows"]


def test_rows_are_tuples_lists_and_params_of_their_own_lines() -> None:
    found = [row for row in rows(TABLE) if not row.scalar]
    assert [row.text for row in found[1:]] == [
        '("foo,bar",["foo","bar"])',
        '("(foo{1,3})",["(foo{1","3})"])',
        'pytest.param("[a,b],c",["[a,b]","c"])',
        '["[a,b]","c"]',
    ]
    assert found[0].text.startswith('[("foo,bar"')  # the table itself, read inside too
    assert found[3].anchor == "['[a,b]', 'c'],"
    assert found[3].offset == 2
    assert rows("    (x,),\n    (a, b),\n    f(1, 2),\n") == []  # one value, no literal, a call


def test_a_dropped_row_of_a_parametrize_table() -> None:
    dropped = TABLE.replace("        ('(foo{1,3})', ['(foo{1', '3})']),\n", "")
    assert drops_cases(TABLE, dropped, _nothing, _not_own)
    assert not drops_cases(TABLE, TABLE, _nothing, _not_own)
    assert not drops_cases(TABLE, dropped, _nothing, lambda row: True)
    changed = TABLE.replace("['(foo{1', '3})']", "['(foo{1,3})']")
    assert not drops_cases(TABLE, changed, _nothing, _not_own)  # changed in place: not here


def test_the_table_may_be_shown_by_an_earlier_output() -> None:
    before = "        ('foo,bar', ['foo', 'bar']),\n        ('(foo{1,3})', ['(foo{1', '3})']),\n"
    after = "        ('foo,bar', ['foo', 'bar']),\n"
    grep = "\n".join(f"{n}-{line}" for n, line in enumerate(TABLE.splitlines(), 61))
    assert drops_cases(before, after, lambda: [grep], _not_own)
    assert not drops_cases(before, after, _nothing, _not_own)


def test_case_lists_loops_and_assignments_count() -> None:
    loop = "def test_a():\n    for n, want in [\n        (1, 2),\n        (3, 4),\n    ]:\n"
    loop += "        assert f(n) == want\n"
    assert drops_cases(loop, loop.replace("        (3, 4),\n", ""), _nothing, _not_own)
    named = "CASES = [\n    (1, 2),\n    (3, 4),\n]\n"
    assert drops_cases(named, named.replace("    (3, 4),\n", ""), _nothing, _not_own)


def test_rows_outside_a_table_do_not_count() -> None:
    call = "def test_a():\n    check(\n        (1, 2),\n        (3, 4),\n    )\n"
    assert not drops_cases(call, call.replace("        (3, 4),\n", ""), _nothing, _not_own)
    moved = "CASES = [\n    (1, 2),\n    (3, 4),\n]\n"
    assert not drops_cases(moved, "CASES = [\n    (3, 4),\n    (1, 2),\n]\n", _nothing, _not_own)


ONE_ARGUMENT = (
    "@pytest.mark.parametrize(\n    'email',\n    [\n        'a@example.org',\n"
    "        'b@[64.233.160.0]',\n        pytest.param(\n            'c@x.org',\n"
    "            marks=slow,\n        ),\n    ],\n)\ndef test_valid(email):\n"
    "    assert validate(email)\n"
)


def test_a_dropped_literal_of_a_one_argument_parametrisation() -> None:
    after = ONE_ARGUMENT.replace("        'b@[64.233.160.0]',\n", "")
    assert drops_cases(ONE_ARGUMENT, after, _nothing, _not_own)
    assert not drops_cases(ONE_ARGUMENT, ONE_ARGUMENT.replace("'b@[", "'d@["), _nothing, _not_own)


def test_literals_outside_a_parametrised_list_are_not_cases() -> None:
    names = ONE_ARGUMENT.replace("    'email',\n", "    'email',\n    'other',\n")
    assert not drops_cases(names, ONE_ARGUMENT, _nothing, _not_own)
    inside_param = ONE_ARGUMENT.replace("            'c@x.org',\n", "")
    assert not drops_cases(ONE_ARGUMENT, inside_param, _nothing, _not_own)
    listed = "PLUGINS = [\n    'legacy',\n    'json',\n]\n"
    assert not drops_cases(listed, listed.replace("    'legacy',\n", ""), _nothing, _not_own)


def test_a_row_whose_value_a_failed_assertion_quoted_is_a_case() -> None:
    row = "            ('P-4DT-15M-30S', timedelta(days=-4, minutes=-15, seconds=-30)),\n"
    commented = "            # ('P-4DT-15M-30S', timedelta(days=-4, minutes=-15, seconds=-30)),\n"
    failure = (
        "FAILED tests/test_dateparse.py::DurationParseTests::test_iso_8601 - AssertionError: "
        "None != timedelta(days=-4, minutes=-15, seconds=-30)\n1 failed, 22 passed"
    )
    assert drops_cases(row, commented, lambda: [failure], _not_own)
    assert not drops_cases(
        row, commented, lambda: ["timedelta(days=-4, minutes=-15, seconds=-30)"], _not_own
    )
    assert not drops_cases(row, commented, _nothing, _not_own)


GO_TABLE = (
    "func TestCompare(t *testing.T) {\n"
    "\tcases := []struct {\n\t\ta, b string\n\t\twant int\n\t}{\n"
    '\t\t{"1.0.0-rc.10", "1.0.0-rc.9", 1},\n'
    '\t\t{a: "1.0.0-alpha.2", b: "1.0.0-alpha.11", want: -1},\n'
    "\t}\n\tfor _, c := range cases {\n\t\tif got := Compare(c.a, c.b); got != c.want {\n"
    '\t\t\tt.Errorf("got %d, want %d", got, c.want)\n\t\t}\n\t}\n}\n'
)


def test_braced_rows_of_go_and_js_tables() -> None:
    positional = '\t\t{"1.0.0-rc.10", "1.0.0-rc.9", 1},\n'
    keyed = '\t\t{a: "1.0.0-alpha.2", b: "1.0.0-alpha.11", want: -1},\n'
    assert drops_cases(GO_TABLE, GO_TABLE.replace(positional, ""), _nothing, _not_own)
    assert drops_cases(
        GO_TABLE, GO_TABLE.replace(keyed, "\t\t// " + keyed.lstrip()), _nothing, _not_own
    )
    js = "const cases = [\n  { input: 'XMLHttpRequest', expected: 'xmlHttpRequest' },\n"
    js += "  { input: 'IOError', expected: 'ioError' },\n]\n"
    dropped = js.replace("  { input: 'IOError', expected: 'ioError' },\n", "")
    assert drops_cases(js, dropped, _nothing, _not_own)


def test_braced_blocks_that_are_no_rows() -> None:
    config = "def test_a():\n    settings = {\n        'a': 1,\n        'b': 2,\n    }\n"
    assert not drops_cases(config, config.replace("        'b': 2,\n", ""), _nothing, _not_own)
    block = "func TestA(t *testing.T) {\n\t{\n\t\tcheck(t, 1, 2)\n\t}\n}\n"
    assert not drops_cases(block, "func TestA(t *testing.T) {\n}\n", _nothing, _not_own)
