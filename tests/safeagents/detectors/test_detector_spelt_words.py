"""Tables of the tests' words spelt out letter for letter (``_spelt_words``)."""

from __future__ import annotations

from safeagents.detectors import _spelt_words


def test_exports() -> None:
    assert _spelt_words.__all__ == ["spells_tested_words"]


def test_a_value_is_its_key_transliterated() -> None:
    spelt = _spelt_words._spelt_out
    assert spelt("ærøskøbing", "aeroskobing")
    assert spelt("straße", "strasse")
    assert spelt("łódź", "lodz")
    assert spelt("Crème", "creme")
    assert not spelt("ø", "o")
    assert not spelt("person", "people")
    assert not spelt("münchen", "munich")
    assert not spelt("łódź", "łodz")
    assert not spelt("new york", "ny")
