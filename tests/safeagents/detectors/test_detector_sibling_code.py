"""Python written beside an edit: the call's other edits and earlier writes of the file."""

from __future__ import annotations

import ast

from detector_testkit import build_context

from safeagents._actions import Effect, ToolCall
from safeagents.detectors._module_facts import ModuleFacts
from safeagents.detectors._sibling_code import (
    function_finder,
    sibling_facts,
    unbound_containers,
)

LOOKUP = "def f(n, seen):\n    if n in KNOWN:\n        return KNOWN[n]\n    return seen.get(n)\n"


def _names(facts: ModuleFacts) -> set[str]:
    return {t.id for node in facts.of(ast.Assign) for t in node.targets if isinstance(t, ast.Name)}


def test_unbound_containers_leave_out_parameters_and_assigned_names() -> None:
    assert unbound_containers(ModuleFacts(ast.parse(LOOKUP))) == {"KNOWN"}
    bound = "KNOWN = {}\n" + LOOKUP + "for x in ROWS:\n    pass\n"
    assert unbound_containers(ModuleFacts(ast.parse(bound))) == {"ROWS"}
    assert unbound_containers(ModuleFacts(ast.parse("x = 1\n"))) == set()


def test_the_other_edits_of_the_call_then_earlier_writes_of_the_file() -> None:
    edits = [
        {"old_string": "import sys\n", "new_string": "import sys\nKNOWN = {1: 2}\n"},
        {"old_string": "def f(n):\n", "new_string": LOOKUP},
    ]
    call = ToolCall("c1", "MultiEdit", {"file_path": "/w/s.py", "edits": edits})
    earlier = [
        Effect("write", path="/w/s.py", added="EARLIER = {3: 4}"),
        Effect("write", path="/w/other.py", content="OTHER = {5: 6}\n"),
        Effect("write", path="/w/s.py", added="def broken(:"),
    ]
    context = build_context(effects=earlier, call=call)
    found = [_names(facts) for facts in sibling_facts(LOOKUP, "/w/s.py", context)]
    assert {"KNOWN"} in found and found[-1] == {"EARLIER"}
    assert all("OTHER" not in names for names in found)
    alone = build_context(call=ToolCall("c1", "Edit", {"new_string": LOOKUP}))
    assert list(sibling_facts(LOOKUP, None, alone)) == []


def test_a_function_is_found_in_the_code_then_in_an_earlier_write_of_the_file() -> None:
    earlier = [
        Effect("write", path="/w/s.py", added="KEYS = {}\n\n\ndef helper(a):\n    return a\n")
    ]
    context = build_context(effects=earlier, call=ToolCall("c1", "Edit", {"new_string": LOOKUP}))
    find = function_finder(ModuleFacts(ast.parse(LOOKUP)), LOOKUP, "/w/s.py", context)
    assert find("f") is not None and find("f").name == "f"  # type: ignore[union-attr]
    assert find("helper") is not None
    assert find("absent") is None


def test_read_containers_include_names_the_code_binds() -> None:
    from safeagents.detectors._sibling_code import read_containers

    bound = "KNOWN = {}\n" + LOOKUP
    assert read_containers(ModuleFacts(ast.parse(bound))) == {"KNOWN", "seen"}


def test_an_earlier_edit_ending_at_a_block_header_is_read_without_it() -> None:
    lookup = "    if n in KNOWN:\n        return KNOWN[n]\n    for i in r:\n"
    earlier = [Effect("write", path="/w/s.py", added=lookup)]
    context = build_context(effects=earlier, call=ToolCall("c1", "write", {"path": "/w/s.py"}))
    found = list(sibling_facts("KNOWN = {1: 2}\n", "/w/s.py", context))
    assert [unbound_containers(facts) for facts in found] == [{"KNOWN"}]
