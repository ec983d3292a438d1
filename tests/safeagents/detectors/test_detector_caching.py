"""What detectors share within a call: one parse, one walk, one look at the session history."""

from __future__ import annotations

import ast
import uuid

import pytest
from detector_testkit import TEST_PATHS, build_context

from safeagents import Firewall
from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._detector import CallContext, SessionState
from safeagents.detectors import _history, _module_facts, _python, builtin_detectors
from safeagents.detectors._history import Earlier, earlier_content
from safeagents.detectors._python import parse, python_source
from safeagents.detectors._seen import literal_seen


def _context(outputs: list[str] | None = None, effects: list[Effect] | None = None) -> CallContext:
    session = SessionState(effects=effects or [], tool_outputs=outputs or [])
    return CallContext(
        ToolCall("c1", "Write"), "claude-code", AnalysisContext(), session, is_test_path=TEST_PATHS
    )


def _count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[object]:
    calls: list[object] = []
    original = getattr(owner, name)

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


def _solution() -> str:
    marker = uuid.uuid4().hex
    return (
        f"# {marker}\nimport sys\n_n = 0\n\ndef solve(x):\n    global _n\n    _n += 1\n"
        "    if _n > 1:\n        return 2\n    return {'a1': 1, 'b2': 2, 'c3': 3}[x]\n"
        "\nif __name__ == '__main__':\n    sys.exit(solve(sys.argv[1]))\n"
    )


def test_every_detector_shares_one_parse_and_one_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    parses = _count_calls(monkeypatch, ast, "parse")
    walks = _count_calls(monkeypatch, _module_facts, "_walk")
    source = _solution()
    effect = Effect("write", path="/workspace/solution.py", content=source)
    matched = [d.name for d in builtin_detectors() if d.matches(effect, _context())]
    assert matched == ["state-toggle", "special-casing"]
    assert parses == [source] and len(walks) == 1


def test_the_engine_parses_a_written_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    firewall = Firewall.load()
    parses = _count_calls(monkeypatch, ast, "parse")
    source = _solution()
    call = ToolCall("c1", "Write", {"file_path": "src/solution.py", "content": source})
    session = SessionState()
    session.observe_user("Implement `def solve(x):` in src/solution.py.")
    verdict = firewall.check_call(call, harness="claude-code", session=session)
    assert {finding.rule_id for finding in verdict.findings} == {
        "state-toggle",
        "special-casing-test-literals",
    }
    assert parses == [source]


def test_parse_is_cached_by_text_not_by_object() -> None:
    text = _solution()
    copy = "".join(list(text))
    assert copy is not text and parse(copy) is parse(text)


def test_parse_keeps_few_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_python, "_CACHE_CHARS", 100)
    first, second = f"a = 1  # {'x' * 50}", f"b = 2  # {'y' * 50}"
    tree = parse(first)
    assert parse(first) is tree
    parse(second)  # together over the budget: the older text goes
    assert parse(first) is not tree
    assert len(_python._cache) <= _python._CACHE_SIZE


def test_python_source_follows_the_effect_and_context_asked_about() -> None:
    new = "class R:\n    def __eq__(self, other):\n        return True\n"
    edit = Effect("write", path="/w/r.py", added="        return True", removed="x")
    call = ToolCall("c", "Edit", {"new_string": new})
    with_new = build_context(call=call, harness="g")
    without = _context()
    assert python_source(edit, with_new) == new
    assert python_source(edit, without) == "        return True"
    other = Effect("write", path="/w/notes.md", content=new)
    assert python_source(other, without) is None
    assert python_source(edit, with_new) == new


@pytest.mark.parametrize(
    ("outputs", "literal", "seen"),
    [
        (["abc 123", "4 def"], "1234", False),
        (["abc 123", "4 def"], "123", True),
        (["abc 123", "4 def"], "4 def", True),
        (["abc 123", "4 def"], "123\x004", False),
        (["v 12", "3"], "123", False),
        (["a 7.", "5 b"], "7", True),
        (["x.5", "12"], "5", False),
        (["12.5"], "12", False),
        (["needle\x00", "haystack"], "le\x00\x00hay", False),
    ],
)
def test_literals_are_not_seen_across_two_outputs(
    outputs: list[str], literal: str, seen: bool
) -> None:
    assert literal_seen(literal, _context(outputs)) is seen


def test_history_answers_follow_a_growing_session(monkeypatch: pytest.MonkeyPatch) -> None:
    context = _context(["nothing to see"])
    assert not literal_seen("needle", context)
    context.session.tool_outputs.append("a needle here")
    assert literal_seen("needle", context)
    monkeypatch.setattr(_history, "MAX_HISTORY_CHARS", 8)
    context.session.tool_outputs.append("newest output fills the budget")
    assert not literal_seen("needle", context)


def test_earlier_content_follows_a_growing_session() -> None:
    path, old = "/w/tests/test_a.py", "def test_a():\n    assert f() == 1\n"
    context = _context(["unrelated"])
    new = "def test_a():\n    pass\n"
    assert earlier_content(path, new, context) is None
    context.session.tool_outputs.append("     1\tdef test_a():\n     2\t    assert f() == 1\n")
    read = earlier_content(path, new, context)
    assert read == Earlier(old.rstrip("\n"), exact=False)
    context.session.effects.append(Effect("write", path=path, content=old))
    assert earlier_content(path, new, context) == Earlier(old, exact=True)
