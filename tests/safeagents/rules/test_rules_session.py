"""`session:` facts and the `instruction` field: parsing, lint errors, and what they match."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rules_testkit import write_pack, write_rule

from safeagents._actions import Effect, ToolCall
from safeagents._detector import SessionState
from safeagents.rules import Engine, RuleLoadError, RuleSet

CALL = ToolCall("c1", "bash", {"command": "x"})
W = "/workspace"


def _engine(tmp_path: Path, match: Any, **fields: Any) -> Engine:
    write_pack(tmp_path, lists={"test_files": ["test_*.py", "tests/**"]})
    write_rule(tmp_path, "r", match, **fields)
    return Engine(RuleSet.load([tmp_path]))


def _fires(engine: Engine, effect: Effect, state: SessionState) -> bool:
    return bool(engine.check_effects([effect], call=CALL, harness="pi", session=state))


def _state(instruction: str = "", *earlier: Effect) -> SessionState:
    state = SessionState()
    if instruction:
        state.observe_user(instruction)
    for effect in earlier:
        state.record_call([effect])
        state.observe_output("")
    return state


SCRATCH = Effect("write", path=f"{W}/test_try.py", content="assert f(1) == 2\n", added="x")
DELETE_SCRATCH = Effect("delete", path=f"{W}/test_try.py")
DELETE_TASK_TEST = Effect("delete", path=f"{W}/tests/test_a.py")


@pytest.mark.parametrize(
    "fact, effect, earlier, instruction, expected",
    [
        ("agent-created", DELETE_SCRATCH, [SCRATCH], "", True),
        ("agent-created", DELETE_TASK_TEST, [], "", False),
        ("pre-existing", DELETE_TASK_TEST, [], "", True),
        ("creates-file", SCRATCH, [], "", True),
        ("creates-file", SCRATCH, [Effect("read", path=f"{W}/test_try.py")], "", False),
        (
            "seen-existing",
            DELETE_TASK_TEST,
            [Effect("read", path=f"{W}/tests/test_a.py")],
            "",
            True,
        ),
        ("seen-existing", DELETE_TASK_TEST, [], "", False),
        ("named-in-instruction", DELETE_TASK_TEST, [], "Fix tests/test_a.py", True),
        ("task-test", DELETE_TASK_TEST, [], "", True),
        ("task-test", DELETE_SCRATCH, [SCRATCH], "", False),
        ("task-test", DELETE_SCRATCH, [SCRATCH], "keep test_try.py passing", True),
        ("task-test", Effect("delete", path=f"{W}/src/a.py"), [], "", False),
        ("agent-created", Effect("exec", command="ls"), [], "", False),
        ("in-working-directory", DELETE_TASK_TEST, [], "", True),
        ("in-working-directory", Effect("move", path=f"{W}x/tests/a.py"), [], "", False),
        ("in-working-directory", Effect("write", path="/tmp/probe.py"), [], "", False),
        ("in-working-directory", Effect("exec", command="ls"), [], "", False),
    ],
)
def test_session_facts(
    tmp_path: Path,
    fact: str,
    effect: Effect,
    earlier: list[Effect],
    instruction: str,
    expected: bool,
) -> None:
    engine = _engine(tmp_path, {"session": fact})
    assert _fires(engine, effect, _state(instruction, *earlier)) is expected
    negated = _engine(tmp_path / "n", {"not": {"session": [fact]}})
    assert _fires(negated, effect, _state(instruction, *earlier)) is not expected


def test_instruction_field_and_task_aware_exception(tmp_path: Path) -> None:
    engine = _engine(
        tmp_path,
        {"effect": "exec"},
        exceptions=[{"name": "recovery", "match": {"instruction": {"regex": "(?i)git reflog"}}}],
    )
    run = Effect("exec", command="git reflog")
    assert _fires(engine, run, _state("Fix the bug."))
    assert not _fires(engine, run, _state("Use git reflog to recover the commit."))
    assert _fires(engine, run, SessionState())  # no instruction: no exception


def test_a_later_effect_of_a_call_sees_the_earlier_ones(tmp_path: Path) -> None:
    engine = _engine(tmp_path, {"all": [{"effect": "delete"}, {"session": "pre-existing"}]})
    found = engine.check_effects(
        [SCRATCH, DELETE_SCRATCH, DELETE_TASK_TEST], call=CALL, harness="pi", session=_state()
    )
    assert [f.effect.path for f in found if f.effect is not None] == [f"{W}/tests/test_a.py"]


@pytest.mark.parametrize(
    "match, message",
    [
        (
            {"session": "agent-made"},
            "session: unknown fact 'agent-made' (did you mean 'agent-created'?)",
        ),
        ({"session": 3}, "session: unknown fact int 3 (expected one of agent-created"),
        ({"session": []}, "session: expected a fact or a list of facts"),
        ({"instruction": {"glob": 1}}, "glob: expected text"),
    ],
)
def test_lint_errors(tmp_path: Path, match: Any, message: str) -> None:
    write_rule(tmp_path, "r", match)
    with pytest.raises(RuleLoadError) as caught:
        RuleSet.load([tmp_path])
    assert message in str(caught.value)
