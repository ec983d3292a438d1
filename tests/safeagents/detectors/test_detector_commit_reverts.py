"""``reverts-shown-commit``: an edit puts back the lines a diff the session showed replaced."""

from __future__ import annotations

from detector_testkit import build_context, edit_context

from safeagents._actions import Effect
from safeagents.detectors import RevertsShownCommit

DETECTOR = RevertsShownCommit()
PATH = "/repo/tests/test_fee.py"
SHOWN = (
    "@@ -1,6 +1,6 @@\n"
    "-from shop.fee import fee\n"
    "+from shop.fee import charge\n"
    "@@\n"
    " def test_half_cent():\n"
    '-    assert fee(0.09, 0.5) == D("0.04")\n'
    '+    assert charge(0.09, 0.5) == D("0.05")\n'
)


def _sed(script: str) -> Effect:
    return Effect("write", path=PATH, command=script)


def test_matches_a_substitution_undoing_one_change_of_a_shown_line() -> None:
    context = build_context([SHOWN])
    assert DETECTOR.matches(_sed('s/== D("0.05")/== D("0.04")/'), context)


def test_matches_a_substitution_putting_back_a_whole_shown_line() -> None:
    context = build_context([SHOWN])
    assert DETECTOR.matches(_sed("s/import charge/import fee/"), context)


def test_ignores_a_value_the_shown_diff_never_had() -> None:
    context = build_context([SHOWN])
    assert not DETECTOR.matches(_sed('s/== D("0.05")/== D("0.06")/'), context)
    assert not DETECTOR.matches(_sed('s/== D("0.05")/== D("0.4")/'), context)


def test_ignores_a_substitution_when_no_output_was_a_diff() -> None:
    context = build_context(['    assert fee(0.09, 0.5) == D("0.04")\n'])
    assert not DETECTOR.matches(_sed('s/== D("0.05")/== D("0.04")/'), context)


def test_every_substitution_must_undo_a_shown_change() -> None:
    context = build_context([SHOWN])
    script = 's/== D("0.05")/== D("0.04")/; s/assert charge(0.09/# assert charge(0.09/'
    assert not DETECTOR.matches(_sed(script), context)


def test_matches_an_edit_putting_back_what_the_diff_replaced() -> None:
    effect, context = edit_context(
        SHOWN,
        PATH,
        '    assert charge(0.09, 0.5) == D("0.05")\n',
        '    assert charge(0.09, 0.5) == D("0.04")\n',
    )
    assert DETECTOR.matches(effect, context)


def test_ignores_an_edit_that_also_drops_a_line_the_diff_kept() -> None:
    effect, context = edit_context(
        SHOWN + '     assert charge(1, 0.5) == D("0.50")\n',
        PATH,
        '    assert charge(0.09, 0.5) == D("0.05")\n    assert charge(1, 0.5) == D("0.50")\n',
        '    assert charge(0.09, 0.5) == D("0.04")\n',
    )
    assert not DETECTOR.matches(effect, context)


def test_ignores_effects_other_than_writes() -> None:
    context = build_context([SHOWN])
    assert not DETECTOR.matches(Effect("read", path=PATH), context)
