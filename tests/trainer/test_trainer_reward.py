"""Session rewards: verifier outcome, tool-call bonus and its floor, hacks, unscored, the hook."""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any

import pluggy
import pytest
from trainer_testkit import Transcripts, turn

import safeagents.plugins
import trainer.hookspecs
from safeagents.plugins import hookimpl
from safeagents.store import SessionRecord
from trainer import DefaultReward, Outcome, OutcomeError, default_reward, load_reward, parse_outcome
from trainer._reward import task_id_of


def _session(
    outcome: dict[str, Any] | None, *, tool_calls: int = 0, hacked: bool = False
) -> SessionRecord:
    return SessionRecord(
        id="s", harness="opencode", tool_calls=tool_calls, hacked=hacked, outcome=outcome
    )


def _scored(transcripts: Transcripts, outcome: dict[str, Any], **session: Any) -> SessionRecord:
    """A session stored with one turn, then scored through the store."""
    transcripts.record("s", [turn("s", [1], [2])], **session)
    return transcripts.set_outcome("s", outcome)


@pytest.mark.parametrize(
    ("outcome", "tool_calls", "expected"),
    [
        ({"success": True}, 3, 1.0 + 0.1 * (1 - 3 / 15)),
        ({"success": True}, 0, 1.1),
        ({"success": True, "reward": 0.5}, 6, 0.5 + 0.1 * (1 - 6 / 15)),
        ({"reward": 0.7}, 12, 0.7 + 0.1 * (1 - 12 / 15)),
        ({"success": False}, 3, 0.0),
        ({"success": False, "reward": 0.25}, 3, 0.25),
        ({"reward": 0}, 3, 0.0),
        ({"success": True}, 15, 1.0),
        ({"success": True}, 40, 1.0),
    ],
)
def test_success_earns_the_verifier_score_plus_a_floored_tool_call_bonus(
    transcripts: Transcripts, outcome: dict[str, Any], tool_calls: int, expected: float
) -> None:
    session = _scored(transcripts, outcome, tool_calls=tool_calls)
    assert session.tool_calls == tool_calls
    assert default_reward(session) == pytest.approx(expected)


def test_a_hacked_session_scores_zero_whatever_the_verifier_says(
    transcripts: Transcripts,
) -> None:
    session = _scored(transcripts, {"success": True, "reward": 1.0}, tool_calls=2, hacked=True)
    assert session.hacked
    assert default_reward(session) == 0.0


def test_a_session_without_outcome_is_unscored_never_zero(transcripts: Transcripts) -> None:
    transcripts.record("s", [turn("s", [1], [2])], tool_calls=1, hacked=True)
    session = transcripts.session("s")
    assert session.outcome is None
    assert default_reward(session) is None
    assert default_reward(_session(None)) is None


@pytest.mark.parametrize(
    "outcome",
    [
        {},
        {"error": "the verifier crashed"},
        {"success": None, "reward": None},
        {"success": "yes"},
        {"reward": True},
        {"reward": "1"},
        {"reward": float("nan")},
        {"reward": float("inf")},
        {"success": True, "task_id": 1.5},
        {"success": True, "task_id": ["a"]},
    ],
)
def test_an_unusable_outcome_leaves_the_session_unscored(
    outcome: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="safeagents.trainer"):
        assert default_reward(_session(outcome)) is None
    assert "session s is unscored" in caplog.text
    with pytest.raises(OutcomeError):
        parse_outcome(outcome)


def test_parse_outcome_reads_the_documented_keys_and_ignores_others() -> None:
    parsed = parse_outcome({"success": True, "reward": 2, "task_id": "t-9", "log": "…"})
    assert parsed == Outcome(success=True, reward=2.0, task_id="t-9")
    assert isinstance(parsed.reward, float)
    assert parse_outcome({"success": False, "task_id": 7}).task_id == "7"
    assert parse_outcome({"reward": 0.0}).succeeded is False
    assert parse_outcome({"reward": 0.3}).succeeded is True
    assert parse_outcome({"success": True}).score == 1.0


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (None, None),
        ({"success": True}, None),
        ({"task_id": "fix-sum"}, "fix-sum"),
        ({"task_id": ""}, None),
        ({"task_id": 12}, "12"),
        ({"task_id": 12.0}, "12"),
        ({"task_id": 12.5}, None),
        ({"task_id": True}, None),
    ],
)
def test_task_id_of(outcome: dict[str, Any] | None, expected: str | None) -> None:
    assert task_id_of(_session(outcome)) == expected


def test_the_bonus_and_horizon_are_settings() -> None:
    session = _session({"success": True}, tool_calls=5)
    assert default_reward(session, tool_call_bonus=0.2, tool_call_horizon=10) == pytest.approx(1.1)
    assert DefaultReward(0.2, 10).safeagents_reward(session) == pytest.approx(1.1)
    with pytest.raises(ValueError, match="tool_call_horizon"):
        DefaultReward(0.1, 0)


def test_the_reward_hook_is_declared_first_result() -> None:
    plugins = pluggy.PluginManager(safeagents.plugins.PROJECT_NAME)
    plugins.add_hookspecs(trainer.hookspecs)
    caller = plugins.hook.safeagents_reward
    assert caller.spec is not None and caller.spec.opts["firstresult"]


def test_the_default_reward_is_loaded_as_a_plugin() -> None:
    reward = load_reward(entry_points=False)
    assert reward(_session({"success": True}, tool_calls=3)) == pytest.approx(1.08)
    assert reward(_session({"success": True}, hacked=True)) == 0.0
    assert reward(_session(None)) is None
    bigger = load_reward(entry_points=False, tool_call_bonus=0.5, tool_call_horizon=5)
    assert bigger(_session({"success": True}, tool_calls=1)) == pytest.approx(1.4)


class _Partial:
    """Scores only sessions of one harness; defers on the others."""

    @hookimpl
    def safeagents_reward(self, session: SessionRecord) -> float | None:
        return 5.0 if session.harness == "pi" else None


def test_a_plugin_overrides_the_default_and_none_defers_to_it() -> None:
    reward = load_reward(entry_points=False, plugins=[_Partial()])
    pi = SessionRecord(id="p", harness="pi", outcome=None)
    assert reward(pi) == 5.0  # the plugin decides, even for a session the default leaves out
    assert reward(_session({"success": False})) == 0.0  # deferred to the default


class _Excluder:
    """Removes a task from training, whatever the other implementations say."""

    @hookimpl(wrapper=True)
    def safeagents_reward(self, session: SessionRecord) -> Generator[None, Any, float | None]:
        result: float | None = yield
        return None if (session.outcome or {}).get("task_id") == "broken" else result


def test_a_wrapper_can_exclude_a_session_the_default_would_score() -> None:
    reward = load_reward(entry_points=False, plugins=[_Excluder()])
    assert reward(_session({"success": True, "task_id": "broken"})) is None
    assert reward(_session({"success": True, "task_id": "fine"})) == pytest.approx(1.1)


class _Wrong:
    @hookimpl
    def safeagents_reward(self, session: SessionRecord) -> object:
        return "high"


def test_a_plugin_returning_a_non_number_is_an_error() -> None:
    reward = load_reward(entry_points=False, plugins=[_Wrong()])
    with pytest.raises(TypeError, match="expected a finite number or None"):
        reward(_session({"success": True}))
