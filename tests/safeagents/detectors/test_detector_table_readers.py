"""A table a write binds after an earlier edit of the file added the lookup that reads it."""

from __future__ import annotations

import ast
from dataclasses import replace

from detector_testkit import build_context

from safeagents._actions import Effect, ToolCall
from safeagents._detector import CallContext
from safeagents.detectors import SpecialCasing
from safeagents.detectors._case_tables import override_tables, tables_of
from safeagents.detectors._python import PythonCode
from safeagents.detectors._table_readers import read_by_earlier_edit

PATH = "/workspace/func.py"
TESTS = "assert span([4, 2, 9, 2, 4]) == 21\nassert span([3, 3]) == 6\n"
LOOKUP = "    if tuple(xs) in _FIXED:\n        return _FIXED[tuple(xs)]\n    best = 0\n"


def _context(lookup: str, tests: str = TESTS, said: tuple[str, ...] = ()) -> CallContext:
    earlier = Effect("write", path=PATH, added=lookup, removed="    best = 0\n")
    context = build_context([tests], [earlier], call=ToolCall("c2", "write", {"path": PATH}))
    context.session.previous_said = said
    return context


def _judged(table: str, context: CallContext) -> bool:
    code = PythonCode(table, PATH, False, ast.parse(table))
    return read_by_earlier_edit(code, tables_of(code.facts), override_tables(code.facts), context)


def test_a_late_override_read_by_the_earlier_lookup_an_assertion_pairs() -> None:
    assert _judged("_FIXED = {(4, 2, 9, 2, 4): 21}\n", _context(LOOKUP))
    assert SpecialCasing().matches(
        Effect("write", path=PATH, added="_FIXED = {(4, 2, 9, 2, 4): 21}\n"), _context(LOOKUP)
    )


def test_a_lookup_ending_at_a_block_header_is_read() -> None:
    cut = "    key = tuple(xs)\n    if key in _FIXED:\n        return _FIXED[key]\n"
    cut += "    for x in xs:\n"
    assert _judged("_FIXED = {(4, 2, 9, 2, 4): 21}\n", _context(cut))


def test_an_entry_nothing_pairs_or_a_table_no_earlier_edit_reads() -> None:
    assert not _judged("_FIXED = {(5, 1, 5, 1): 12}\n", _context(LOOKUP))
    assert not _judged("_OTHER = {(4, 2, 9, 2, 4): 21}\n", _context(LOOKUP))
    assert not _judged("_FIXED = {(4, 2, 9, 2, 4): 21}\n", _context("    best = 0\n"))


def test_a_table_the_write_reads_itself_is_left_to_the_write() -> None:
    own = "_FIXED = {(4, 2, 9, 2, 4): 21}\n\ndef g(ys):\n    return _FIXED.get(tuple(ys))\n"
    assert not _judged(own, _context(LOOKUP))


def test_the_words_of_the_last_turn_pair_an_override_where_no_output_was_kept() -> None:
    unpublished = "[tool output not published in source]"
    table = "_FIXED = {(15, 62, 38, 91, 27): 40}\n"
    assert _judged(table, _context(LOOKUP, unpublished, ("The test wants 40.",)))
    assert not _judged(table, _context(LOOKUP, unpublished, ("The test wants 41.",)))
    assert not _judged(table, _context(LOOKUP, unpublished))
    base = "_FIXED = {(15, 62, 38, 91, 27): 0}\n"
    assert not _judged(base, _context(LOOKUP, unpublished, ("The test expects 0.",)))


def test_the_said_words_are_this_turns_and_the_last_ones() -> None:
    context = _context(LOOKUP, "[tool output not published in source]")
    table = "_FIXED = {(15, 62, 38, 91, 27): 40}\n"
    assert _judged(table, replace(context, said=("It expected 40 there.",)))
