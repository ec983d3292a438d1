"""Fuzz of model-returned tool calls through ``Firewall.check_call`` (issue 11, item 1).

Random shell from a small grammar of risky and harmless commands (nesting, long runs, odd
quoting, random bytes) and random argument strings, in the pi, claude-code and codex tool
schemas: the check never raises, and no call whose analysis gave up goes without a finding.
"""

from __future__ import annotations

import json
import shlex
from functools import cache
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from safeagents import Firewall, ToolCall
from safeagents.rules import CallVerdict

RISKY = (
    "rm tests/test_a.py",
    "rm -rf tests",
    "cat ~/.ssh/id_rsa",
    "git push --force origin main",
    "python3 -c \"import os; os.remove('tests/test_a.py')\"",
    "echo 'def test_a(): pass' > tests/test_a.py",
    "rm${IFS}tests/test_a.py",
)
HARMLESS = ("echo x", "ls -la", "true", "cat README.md", "pytest -q", ":", "cd src", "x=1")


@cache
def firewall() -> Firewall:
    return Firewall.load()


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pair = st.tuples(children, children)
    quoted = children.map(shlex.quote)
    return st.one_of(
        st.tuples(
            children, st.sampled_from(("; ", " && ", " || ", " | ", "\n", " & ")), children
        ).map("".join),
        children.map(lambda c: f"( {c} )"),
        children.map(lambda c: f"(({c}))"),
        children.map(lambda c: f"{{ {c}; }}"),
        children.map(lambda c: f"echo $({c})"),
        quoted.map(lambda c: f"bash -c {c}"),
        quoted.map(lambda c: f"eval {c}"),
        children.map(lambda c: f"sh <<'EOF'\n{c}\nEOF"),
        children.map(lambda c: f"cat > notes.txt <<EOF\n{c}\nEOF"),
        pair.map(lambda p: f"if {p[0]}; then {p[1]}; fi"),
        children.map(lambda c: f"for f in a b; do {c}; done"),
        st.tuples(st.integers(1, 3_000), children).map(lambda p: "echo x; " * p[0] + p[1]),
        st.tuples(st.integers(1, 3_000), children).map(lambda p: "\n" * p[0] + p[1]),
        st.tuples(children, st.sampled_from("'\"`$\\(){}[]<>;|&#\n")).map("".join),
    )


SCRIPTS = st.recursive(
    st.one_of(st.sampled_from(RISKY + HARMLESS), st.text(max_size=40)),
    _combine,
    max_leaves=12,
)


def _call(harness: str, command: str) -> tuple[str, dict[str, Any]]:
    if harness == "claude-code":
        return "Bash", {"command": command}
    if harness == "codex":
        return "shell", {"command": ["bash", "-lc", command]}
    return "bash", {"command": command}


def _assert_fail_closed(verdict: CallVerdict) -> None:
    gave_up = [effect for effect in verdict.effects if effect.unanalysable]
    event("gave up" if gave_up else "analysed")
    event("blocked" if verdict.blocked else "allowed")
    if gave_up:
        assert verdict.blocked, f"gave up without a finding: {gave_up[0].describe()}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command=SCRIPTS, harness=st.sampled_from(("pi", "claude-code", "codex")))
def test_random_shell_never_raises_and_never_gives_up_silently(command: str, harness: str) -> None:
    tool, arguments = _call(harness, command)
    verdict = firewall().check_call(ToolCall("fuzz", tool, arguments), harness=harness)
    _assert_fail_closed(verdict)


JSON_TEXT = st.one_of(
    st.text(max_size=80),
    st.builds(json.dumps, st.dictionaries(st.sampled_from(("command", "cmd")), st.text())).flatmap(
        lambda text: st.integers(0, len(text)).map(lambda cut: text[:cut])
    ),
    st.builds(lambda c: repr({"command": c}), st.sampled_from(RISKY)),
    st.integers(1, 3_000).map(lambda depth: '{"command": "ls", "x": ' + "[" * depth),
)


@settings(max_examples=300, deadline=None)
@given(arguments=JSON_TEXT, harness=st.sampled_from(("pi", "claude-code", "codex")))
def test_random_argument_strings_never_raise_and_never_give_up_silently(
    arguments: str, harness: str
) -> None:
    tool, _ = _call(harness, "")
    call = ToolCall.from_openai({"id": "fuzz", "function": {"name": tool, "arguments": arguments}})
    verdict = firewall().check_call(call, harness=harness)
    _assert_fail_closed(verdict)
    if call.arguments_error is not None:
        assert [f.rule_id for f in verdict.findings] == ["invalid-tool-arguments"]
