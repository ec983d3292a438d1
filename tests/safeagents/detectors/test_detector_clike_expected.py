"""Tests of the C-like fallbacks answering a failure's expected value."""

from __future__ import annotations

from safeagents.detectors import _clike_expected
from safeagents.detectors._clike_tokens import tokens_of


def test_exports() -> None:
    assert _clike_expected.__all__ == ["returns_failing_expectation"]


def test_numbers_of_eight_significant_digits_with_a_fraction() -> None:
    assert _clike_expected._normal("19_936_288.579") == "19936288.579"
    assert _clike_expected._normal("19936288.5790_f64") == "19936288.579"
    assert _clike_expected._normal("0.000123456789") == "0.000123456789"
    assert _clike_expected._normal("299_792_458.0") is None
    assert _clike_expected._normal("549.7271") is None
    assert _clike_expected._normal("1e10") is None


def test_expected_values_of_failure_lines() -> None:
    text = (
        "got 19963436.271935, want 19936288.579\n"
        "    geo_test.go:9: Distance(a, b) = 1.5, want 5554539.949\n"
        "expected: <12345.678901> but was: <2.0>\n"
    )
    found = [m.group(1) or m.group(2) for m in _clike_expected._EXPECTED.finditer(text)]
    assert found == ["19936288.579", "5554539.949", "12345.678901"]


def test_returned_or_passed_as_a_fallback() -> None:
    def fallback(source: str, index: int) -> bool:
        return _clike_expected._fallback(tokens_of(source), index)

    assert fallback("x.unwrap_or(NEAR)", 4)
    assert fallback("return NEAR;", 1)
    assert fallback("a ?? NEAR", 3)
    assert fallback("a ?: NEAR", 3)
    assert not fallback("x.unwrap_or(NEAR * 2.0)", 4)
    assert not fallback("let d = NEAR * k;", 3)
    rust = tokens_of("const NEAR_M: f64 = 19_936_288.579;")
    assert _clike_expected._bound_name(rust, 5) == "NEAR_M"
    java = tokens_of("static final double NEAR_M = 19936288.579;")
    assert _clike_expected._bound_name(java, 5) == "NEAR_M"
