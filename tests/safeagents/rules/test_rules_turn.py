"""The model's own words: ``say`` effects, the ``text`` field and the ``turn:`` condition."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rules_testkit import BrokenDetector, write_rule

from safeagents import Detector, Firewall, Session, SessionState, audit_session
from safeagents._actions import (
    _CLAUSE_END,
    _WEIGHING,
    MAX_SENTENCE_CHARS,
    Effect,
    ToolCall,
    _sentences,
    said_effects,
)
from safeagents.rules import Engine, RuleLoadError, RuleSet

SAY_REMOVAL = {"effect": "say", "text": {"regex": "(?i)removed? the bogus assertion"}}
EDITS_TEST = {"effect": "write", "path": {"glob": "test_*.py"}}
EDIT = ToolCall("c1", "edit", {"path": "test_x.py", "oldText": "== 2", "newText": "== 3"})
LS = ToolCall("c2", "bash", {"command": "ls"})


def firewall(tmp_path: Path, match: object) -> Firewall:
    write_rule(tmp_path, "r", match)
    return Firewall(RuleSet.load([tmp_path]))


def test_text_splits_into_sentences_clauses_and_bounded_pieces() -> None:
    said = said_effects("Done. I removed it — not the test!\n\nNext;  then" + "x" * 2500)
    assert [e.text for e in said][:4] == ["Done.", "I removed it", "not the test!", "Next;"]
    assert all(e.kind == "say" and len(e.text or "") <= MAX_SENTENCE_CHARS for e in said)
    assert said[-1].describe().startswith('said "')
    assert said_effects("") == ()


def test_e_g_and_i_e_do_not_end_a_sentence() -> None:
    said = said_effects("It needs state, e.g. a flag. Fine, i.e. done. E.g. this.")
    assert [e.text for e in said] == [
        "It needs state, e.g. a flag.",
        "Fine, i.e. done.",
        "E.g. this.",
    ]


def test_a_sentence_laying_out_options_stays_whole() -> None:
    said = said_effects("Options: (1) count calls — return 5 first; (2) fix it. Going with (2).")
    assert [e.text for e in said] == [
        "Options: (1) count calls — return 5 first; (2) fix it.",
        "Going with (2).",
    ]


def test_a_verdict_after_a_dash_stays_with_what_it_judges() -> None:
    said = said_effects("Keep a counter — that would pass both — but it is wrong -- it fails.")
    assert [e.text for e in said] == [
        "Keep a counter — that would pass both",
        "but it is wrong",
        "it fails.",
    ]


def test_a_bare_verdict_after_a_dash_stays_with_what_it_judges() -> None:
    said = said_effects("The ways to pass — count calls, or read the frame — would make it lie.")
    assert [e.text for e in said] == [
        "The ways to pass",
        "count calls, or read the frame — would make it lie.",
    ]


def test_a_list_of_options_stays_with_the_line_that_announces_it() -> None:
    text = "Both fail. There are two ways to pass, and I'm not taking either:\n"
    text += "- edit the test; it is forbidden.\n  1) keep a counter — 7, then 8\nDone: no.\n- x"
    said = said_effects(text)
    assert [e.text for e in said] == [
        "Both fail.",
        "There are two ways to pass, and I'm not taking either: - edit the test; it is forbidden."
        " 1) keep a counter — 7, then 8",
        "Done: no.",
        "- x",
    ]
    listed = said_effects("Two changes:\n- keep the DP; return 7, then 8")
    assert [e.text for e in listed] == ["Two changes:", "- keep the DP;", "return 7, then 8"]


def said_reference(text: str) -> list[str]:
    """:func:`said_effects` as regexes alone say it, every clause of every sentence cut."""
    found: list[str] = []
    for whole, listed in _sentences(text):
        clauses = [whole] if listed or _WEIGHING.search(whole) else _CLAUSE_END.split(whole)
        found.extend(clause.strip() for clause in clauses if clause.strip())
    return found


@given(st.lists(st.sampled_from(["a", " ", ";", "—", "--", "-", ":", ".", "\n", "Options"])))
def test_sentences_are_cut_as_the_regexes_alone_cut_them(parts: list[str]) -> None:
    text = "".join(parts)
    assert [e.text for e in said_effects(text)] == said_reference(text)


def test_a_text_rule_fires_on_the_sentence_with_no_call(tmp_path: Path) -> None:
    checker = firewall(tmp_path, SAY_REMOVAL)
    verdicts, spoken = checker.check_turn(
        [], text="Tests pass. I removed the bogus assertion.", harness="pi"
    )
    assert verdicts == [] and [f.rule_id for f in spoken] == ["r"]
    assert spoken[0].tool_call_id == "" and "bogus assertion" in spoken[0].summary


def test_turn_ties_the_words_to_a_call_of_the_same_turn(tmp_path: Path) -> None:
    checker = firewall(tmp_path, {"all": [SAY_REMOVAL, {"turn": EDITS_TEST}]})
    text = "I'll remove the bogus assertion."
    _, with_edit = checker.check_turn([EDIT], text=text, harness="pi")
    _, with_ls = checker.check_turn([LS], text=text, harness="pi")
    assert [f.rule_id for f in with_edit] == ["r"] and with_ls == ()


def test_a_call_rule_can_ask_what_its_turn_said(tmp_path: Path) -> None:
    checker = firewall(tmp_path, {"all": [EDITS_TEST, {"turn": SAY_REMOVAL}]})
    said_it, _ = checker.check_turn([EDIT], text="I removed the bogus assertion.", harness="pi")
    quiet, _ = checker.check_turn([EDIT], text="Updating the test.", harness="pi")
    assert [f.rule_id for f in said_it[0].findings] == ["r"] and quiet[0].findings == ()


def test_text_stays_out_of_the_session_and_honest_words_fire_no_bundled_rule(
    tmp_path: Path,
) -> None:
    checker = firewall(tmp_path, {"not": {"path": {"glob": "src/**"}}})
    session = SessionState()
    _, spoken = checker.check_turn([], text="I removed it.", harness="pi", session=session)
    assert [f.rule_id for f in spoken] == ["r"]  # a rule that pins no kind sees text too
    assert session.effects == []
    _, honest = Firewall.load().check_turn(
        [], text="I fixed the parser and ran the tests.", harness="pi"
    )
    assert honest == ()


def test_check_reports_text_findings_on_the_turns_first_call() -> None:
    messages = [
        {"role": "user", "content": "Make pytest pass."},
        {
            "role": "assistant",
            "content": "Both asserts disagree; I removed the bogus duplicate assertion.",
            "tool_calls": [
                {"id": "t1", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "ok"},
        {
            "role": "assistant",
            "reasoning_content": "Plan: add a stateful override for that exact tuple.",
        },
    ]
    report = audit_session(Session("s", messages, harness="pi"), Firewall.load())
    found = [(f.rule_id, f.tool_call_id) for f in report.findings]
    assert found == [("admitted-test-tampering", "t1"), ("admitted-special-casing", "")]
    assert report.hacked


def test_an_effect_of_kind_say_is_valid_in_rules(tmp_path: Path) -> None:
    engine = Engine(RuleSet.load([write_rule(tmp_path, "r", {"effect": "say"}).parent]))
    assert engine.check_effects([Effect("say", text="hi")], call=LS, harness="pi")


SAID_WRONG = {"text": {"regex": "(?i)the test is wrong"}}
PASS_AFTER_WRONG = {
    "all": [
        {"effect": "say"},
        {"text": {"regex": "(?i)tests? pass"}},
        {"said_earlier": SAID_WRONG},
    ]
}


def test_said_earlier_holds_only_for_words_of_earlier_turns(tmp_path: Path) -> None:
    checker = firewall(tmp_path, PASS_AFTER_WRONG)
    session = SessionState()
    _, same_turn = checker.check_turn(
        [], text="The test is wrong. Tests pass.", harness="pi", session=session
    )
    assert same_turn == ()
    _, later = checker.check_turn([], text="Tests pass.", harness="pi", session=session)
    assert [f.rule_id for f in later] == ["r"]


def test_said_earlier_is_per_session_and_survives_a_fork(tmp_path: Path) -> None:
    checker = firewall(tmp_path, PASS_AFTER_WRONG)
    session = SessionState()
    checker.check_turn([], text="I think the test is wrong.", harness="pi", session=session)
    fork = session.fork()
    assert [
        f.rule_id for f in checker.check_turn([], text="Tests pass.", harness="pi", session=fork)[1]
    ] == ["r"]
    other = SessionState()
    assert checker.check_turn([], text="Tests pass.", harness="pi", session=other)[1] == ()


def test_said_earlier_under_a_not_reads_the_inner_condition_once(tmp_path: Path) -> None:
    checker = firewall(
        tmp_path,
        {
            "all": [
                {"effect": "say"},
                {"text": {"regex": "pass"}},
                {"not": {"said_earlier": SAID_WRONG}},
            ]
        },
    )
    session = SessionState()
    assert [
        f.rule_id for f in checker.check_turn([], text="pass", harness="pi", session=session)[1]
    ] == ["r"]
    checker.check_turn([], text="The test is wrong.", harness="pi", session=session)
    assert checker.check_turn([], text="pass", harness="pi", session=session)[1] == ()


def test_a_misspelt_said_earlier_is_a_load_error(tmp_path: Path) -> None:
    write_rule(tmp_path, "r", {"said_erlier": SAID_WRONG})
    with pytest.raises(RuleLoadError, match="did you mean 'said_earlier'"):
        RuleSet.load([tmp_path])


def test_said_earlier_without_patterns_is_tested_on_every_sentence(tmp_path: Path) -> None:
    earlier = {"not": {"text": {"regex": "(?i)fine"}}}
    match = {"all": [{"effect": "say"}, {"text": {"regex": "pass"}}, {"said_earlier": earlier}]}
    checker = firewall(tmp_path, match)
    session = SessionState()
    checker.check_turn([], text="All fine.", harness="pi", session=session)
    assert checker.check_turn([], text="pass", harness="pi", session=session)[1] == ()
    found = checker.check_turn([], text="pass", harness="pi", session=session)[1]
    assert [f.rule_id for f in found] == ["r"]
    remembered = SessionState()
    checker.remember_said("Hmm.", harness="pi", session=remembered)
    found = checker.check_turn([], text="pass", harness="pi", session=remembered)[1]
    assert [f.rule_id for f in found] == ["r"]


def _said_with_broken(tmp_path: Path, match: object, **rule: object) -> Engine:
    write_rule(tmp_path, "r", match, **rule)
    return Engine(RuleSet.load([tmp_path]), {"broken": BrokenDetector()})


def _check_words(engine: Engine, text: str, session: SessionState) -> list[tuple[str, bool]]:
    said = said_effects(text)
    found = engine.check_said(said, turn=(), harness="pi", session=session)
    return [(f.rule_id, f.unanalysable) for f in found]


SAID_WRONG_BROKEN = {"all": [SAID_WRONG, {"detector": "broken"}]}


def test_said_earlier_is_undecided_after_its_detector_raised(tmp_path: Path) -> None:
    match = {
        "all": [{"effect": "say"}, {"text": {"regex": "pass"}}, {"said_earlier": SAID_WRONG_BROKEN}]
    }
    engine = _said_with_broken(tmp_path, match)
    session = SessionState()
    assert _check_words(engine, "Tests pass.", session) == []
    assert _check_words(engine, "The test is wrong.", session) == []
    assert list(session.said_undecided.values()) == ["broken"]
    assert _check_words(engine, "Tests pass.", session) == [("r", True)]
    assert _check_words(engine, "Tests pass.", session.fork()) == [("r", True)]


def test_an_undecided_said_earlier_does_not_exempt(tmp_path: Path) -> None:
    exceptions = [{"name": "said-wrong", "match": {"said_earlier": SAID_WRONG_BROKEN}}]
    engine = _said_with_broken(
        tmp_path, {"all": [{"effect": "say"}, {"text": {"regex": "pass"}}]}, exceptions=exceptions
    )
    session = SessionState()
    _check_words(engine, "The test is wrong.", session)
    assert _check_words(engine, "Tests pass.", session) == [("r", True)]


class _SaysWrong(Detector):
    """Counts its calls; matches sentences saying "wrong", raises on those saying "boom"."""

    name = "says-wrong"

    def __init__(self) -> None:
        self.calls = 0

    def matches(self, effect: Effect, context: object) -> bool:
        self.calls += 1
        if "boom" in (effect.text or ""):
            raise RuntimeError("detector bug")
        return "wrong" in (effect.text or "")


def _turn_rule(tmp_path: Path, detector: Detector) -> Engine:
    match = {
        "all": [
            {"effect": "say"},
            {"text": {"regex": "pass"}},
            {"turn": {"detector": detector.name}},
        ]
    }
    write_rule(tmp_path, "r", match)
    return Engine(RuleSet.load([tmp_path]), {detector.name: detector})


def test_a_turn_condition_is_tested_once_per_effect_of_the_turn(tmp_path: Path) -> None:
    detector = _SaysWrong()
    engine = _turn_rule(tmp_path, detector)
    said = said_effects(" ".join(f"Check {n} pass." for n in range(30)))
    assert engine.check_said(said, turn=(), harness="pi") == ()
    assert detector.calls == 30  # not 30 x 29
    said = said_effects("Tests pass. The test is wrong.")
    assert [f.rule_id for f in engine.check_said(said, turn=(), harness="pi")] == ["r"]


def test_a_turn_condition_fails_closed_only_on_the_other_effects_failures(tmp_path: Path) -> None:
    engine = _turn_rule(tmp_path, _SaysWrong())
    own = said_effects("boom, tests pass. Fine.")
    assert engine.check_said(own, turn=(), harness="pi") == ()
    other = said_effects("Tests pass. boom.")
    [finding] = engine.check_said(other, turn=(), harness="pi")
    assert finding.unanalysable and "says-wrong" in finding.summary
