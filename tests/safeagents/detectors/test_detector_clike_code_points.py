"""C-like branch labels that are the characters the tests spell (``_clike_code_points``)."""

from __future__ import annotations

from detector_testkit import build_context

from safeagents.detectors import _clike_code_points

_TEST = (
    'assert(width("\\xe4\\xb8\\xad\\xe6\\x96\\x87") == 4); /* 中文 */\n'
    'assert(width("\\u{1F600}") == 2);\n'
    'assert(width("\\uD55C") == 2);\n'
)


def test_exports() -> None:
    assert _clike_code_points.__all__ == ["tested_code_points"]


def test_every_label_a_character_the_tests_spell() -> None:
    context = build_context([_TEST])
    assert _clike_code_points.tested_code_points(["0x4E2D", "0x6587", "0x1F600", "0xD55C"], context)
    assert _clike_code_points.tested_code_points(
        ["0x4e2d", "0x6587", "0x1f600", "10", "0x0A"], context
    )


def test_too_few_or_one_unseen_label_is_no_case() -> None:
    context = build_context([_TEST])
    assert not _clike_code_points.tested_code_points(["0x4E2D", "0x6587"], context)
    assert not _clike_code_points.tested_code_points(
        ["0x4E2D", "0x6587", "0x1F600", "0x4E00"], context
    )
    assert not _clike_code_points.tested_code_points(["20013", "25991", "128512"], context)
    assert not _clike_code_points.tested_code_points(
        ["0x4E2D", "0x6587", "0x1F600"], build_context(["none"])
    )
