"""A tool result as the detectors read it: codex's shell-result envelope is opened."""

from __future__ import annotations

import json
import re

import pytest

from safeagents._detector import SessionState
from safeagents._tool_output import LINE_NUMBER, output_text


def _envelope(output: object, **extra: object) -> str:
    return json.dumps({"output": output, "metadata": {"exit_code": 0}, **extra})


def test_codex_envelope_gives_the_printed_lines() -> None:
    printed = "12:def test_no_args():\n13-    run([])\n"
    assert output_text(_envelope(printed)) == printed
    assert output_text(json.dumps({"output": printed})) == printed


def test_hermes_envelope_gives_the_printed_lines_and_the_error() -> None:
    assert output_text(json.dumps({"output": "ok\n", "exit_code": 0, "error": None})) == "ok\n"
    failed = json.dumps({"output": "partial", "exit_code": 1, "error": "Traceback …"})
    assert output_text(failed) == "partial\nTraceback …"
    assert output_text(json.dumps({"output": "", "error": "boom"})) == "boom"


def test_other_text_is_left_as_it_is() -> None:
    assert output_text("plain\noutput") == "plain\noutput"
    assert output_text('{"output": "cut short') == '{"output": "cut short'
    assert output_text(_envelope(["not", "text"])) == _envelope(["not", "text"])
    assert output_text(_envelope("x", status="ok")) == _envelope("x", status="ok")
    odd = json.dumps({"output": "x", "metadata": "late"})
    assert output_text(odd) == odd
    strange = json.dumps({"output": "x", "error": {"code": 1}})
    assert output_text(strange) == strange


def test_a_list_of_strings_gives_each_string() -> None:
    opened = ["Successfully opened a.ts:\n\nf('x')\n", "Successfully opened b.ts:\n\ng()\n"]
    assert output_text(repr(opened)) == "\n\n".join(opened)
    assert output_text(json.dumps(opened)) == "\n\n".join(opened)
    for other in ("['a', 1]", "['a', ['b']]", "['unclosed", "[1, 2]", "['a' + 'b']"):
        assert output_text(other) == other


def test_the_session_keeps_the_opened_output() -> None:
    state = SessionState()
    state.observe_output(_envelope("line one\nline two\n"))
    assert state.tool_outputs == ["line one\nline two\n"]


@pytest.mark.parametrize("line", ["    12\tx = 1", "    12→x = 1", "00012| x = 1"])
def test_line_number_matches_each_read_tools_numbering(line: str) -> None:
    match = re.match(rf"\s*{LINE_NUMBER}", line)
    assert match is not None and line[match.end() :] == "x = 1"


def test_line_number_is_no_plain_number() -> None:
    assert re.match(rf"\s*{LINE_NUMBER}", "12 apples") is None
