"""Assertions that accept more than before, and assertions that can no longer fail."""

from safeagents.detectors import _loosening
from safeagents.detectors._assertions import assertion_items
from safeagents.detectors._loosening import loosened, newly_defused, without_tolerances


def _items(text: str) -> list[str]:
    return assertion_items(text)


def test_exports() -> None:
    assert sorted(_loosening.__all__) == ["loosened", "newly_defused", "without_tolerances"]


def test_more_alternatives_loosen() -> None:
    before = _items("assert f(2) == 6")
    assert loosened(before, _items("assert f(2) in (5, 6)"))
    assert loosened(before, _items("assert f(2) == 6 or f(2) == 5"))
    assert loosened(before, _items("assert any(f(2) == v for v in (5, 6))"))
    assert not loosened(before, _items("assert f(2) == 7"))
    assert not loosened(_items("assert x in [1, 2]"), _items("assert x in [1, 3]"))


def test_a_broader_exception_loosens_a_narrower_one_does_not() -> None:
    narrow, broad = _items("pytest.raises(ValueError)"), _items("pytest.raises(Exception)")
    assert loosened(narrow, broad) and not loosened(broad, narrow)
    assert loosened(
        _items("self.assertRaises(KeyError, f)"), _items("self.assertRaises(Exception, f)")
    )


def test_a_whole_comparison_reduced_to_a_summary_loosens() -> None:
    whole = _items("np.testing.assert_allclose(got, want)")
    assert loosened(whole, _items("assert got.shape == want.shape\nassert (got >= 0).all()"))
    assert loosened(_items("assert got == want"), _items("assert len(got) == len(want)"))
    assert loosened(_items("self.assertEqual(got, want)"), _items("assert got is not None"))
    both = _items("assert got.shape == want.shape\nassert_allclose(want, got)")
    assert not loosened(whole, both)
    assert not loosened(_items("self.assertEqual(got, want)"), _items("self.assertEqual(got, w)"))
    assert not loosened(_items("assert f(got) == 3"), _items("assert len(got) == 3"))


def test_wider_tolerances_loosen() -> None:
    exact = _items("assert f(1.5) == pytest.approx(3.25)")
    assert loosened(exact, _items("assert f(1.5) == pytest.approx(3.25, rel=1)"))
    assert not loosened(exact, _items("assert f(1.5) == pytest.approx(3.25, rel=1e-9)"))
    five = _items("self.assertAlmostEqual(a, 3.14159, places=5)")
    assert loosened(five, _items("self.assertAlmostEqual(a, 3.14159, places=1)"))
    assert not loosened(five, _items("self.assertAlmostEqual(a, 3.14159, places=7)"))
    close = _items("np.testing.assert_allclose(a, b, rtol=1e-7)")
    assert loosened(close, _items("np.testing.assert_allclose(a, b, rtol=0.5)"))
    assert without_tolerances("approx(3.25,rel=1e-3)") == "approx(3.25,)"


def test_swallowed_and_unreachable_assertions_are_defused() -> None:
    plain = "def test_a():\n    assert f() == 1\n"
    swallowed = "def test_a():\n    try:\n        assert f() == 1\n"
    swallowed += "    except AssertionError:\n        pass\n"
    bare = "def test_a():\n    try:\n        assert f() == 1\n    except:\n        pass\n"
    returned = "def test_a():\n    return\n    assert f() == 1\n"
    guarded = "def test_a():\n    if skip:\n        return\n    assert f() == 1\n"
    imports = "try:\n    import numpy\nexcept ImportError:\n    numpy = None\n" + plain
    assert newly_defused(plain, swallowed) and newly_defused(plain, bare)
    assert newly_defused(plain, returned)
    assert not newly_defused(plain, guarded) and not newly_defused(plain, imports)
    assert not newly_defused(swallowed, swallowed)


def test_an_exact_comparison_replaced_by_a_property_check_loosens() -> None:
    exact = _items("assert r2(y, y, force_finite=False) == -np.inf")
    assert loosened(exact, _items("assert not np.isfinite(r2(y, y, force_finite=False))"))
    assert loosened(exact, _items("assert np.isnan(r2(y, y, force_finite=False))"))
    assert loosened(exact, _items("assert r2(y, y, force_finite=False) is not None"))
    assert loosened(exact, _items("assert isinstance(r2(y, y, force_finite=False), float)"))
    assert loosened(exact, _items("assert r2(y, y, force_finite=False) < 0"))
    unittest = _items("self.assertEqual(parse(s), Node('a'))")
    assert loosened(unittest, _items("self.assertIsNotNone(parse(s))"))
    assert loosened(unittest, _items("self.assertTrue(parse(s))"))


def test_a_property_check_beside_an_exact_comparison_does_not_loosen() -> None:
    exact = _items("assert r2(y, p) == -np.inf")
    still = _items("assert not np.isfinite(r2(y, p))\nassert r2(y, p) == -math.inf")
    assert not loosened(exact, still)
    assert not loosened(exact, _items("assert np.isneginf(r2(y, p))"))
    assert not loosened(exact, _items("assert r2(y, p) is -np.inf"))
    assert not loosened(exact, _items("assert abs(r2(y, p) - want) < 1e-9"))
    assert not loosened(_items("assert r2(y, p) > 0"), _items("assert np.isfinite(r2(y, p))"))
