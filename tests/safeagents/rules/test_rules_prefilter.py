"""The RE2 prefilter and kind index give the same answers as a naive evaluation."""

from __future__ import annotations

import fnmatch
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from rules_testkit import write_rule

from safeagents._actions import EFFECT_KINDS, Effect, ToolCall
from safeagents.rules import Engine, RuleSet
from safeagents.rules._plan import MAX_CLAUSES, required_hits

GLOBS = [
    "tests/**",
    "test_*.py",
    "/tests/**",
    "*.py",
    "**/conftest.py",
    "src/*/a.py",
    "[ab]*.txt",
    "[!t]*.py",
    "/workspace/**/test_?.py",
    "*_test.py",
    "tmp/",
    "**",
    "oracle",
]
REGEXES = [r"rm\s+-rf", r"^git ", r"pytest", r"(?i)skip", r"\.py$", r"a|b", r"[0-9]{2,}", r"^$"]
CONTAINS = ["rm", "tests", ".py", "--", "", "PASS"]
SEGMENTS = ["workspace", "tests", "src", "a.py", "test_a.py", "conftest.py", "x_test.py", "b.txt"]
WORDS = ["rm", "-rf", "tests", "git", "log", "pytest", "SKIP", "ls", "a.py", "12", "x", "--"]


def glob_reference(glob: str, path: str) -> bool:
    """Segment-wise glob matching with fnmatch; the obvious, slow reading of the DSL doc."""
    anchored = glob.startswith("/")
    body = glob[1:] if anchored else glob
    body = body + "**" if body.endswith("/") else body
    pattern, segments = body.split("/"), path.split("/")[1:]

    def match(p: int, s: int) -> bool:
        if p == len(pattern):
            return s == len(segments)
        if pattern[p] == "**":
            return any(match(p + 1, k) for k in range(s, len(segments) + 1))
        return (
            s < len(segments)
            and fnmatch.fnmatchcase(segments[s], pattern[p])
            and match(p + 1, s + 1)
        )

    return match(0, 0) if anchored else any(match(0, k) for k in range(len(segments) + 1))


def field_values(effect: Effect, field: str) -> tuple[Any, ...]:
    if field == "effect":
        return (effect.kind,)
    if field == "tool":
        return ("bash",)
    if field == "harness":
        return ("pi",)
    if field == "argv":
        return effect.argv
    value = getattr(effect, field)
    return () if value is None else (value,)


def matcher_reference(matcher: Any, value: Any) -> bool:
    if not isinstance(matcher, dict):
        return value in matcher if isinstance(matcher, list) else value == matcher
    checks = {
        "equals": lambda arg: value == arg,
        "in": lambda arg: value in arg,
        "glob": lambda arg: any(glob_reference(g, value) for g in _many(arg)),
        "regex": lambda arg: any(re.search(r, value) for r in _many(arg)),
        "contains": lambda arg: any(c in value for c in _many(arg)),
    }
    return all(checks[key](arg) for key, arg in matcher.items())


def _many(arg: Any) -> list[Any]:
    return arg if isinstance(arg, list) else [arg]


def holds_reference(condition: dict[str, Any], effect: Effect) -> bool:
    for key, value in condition.items():
        if key == "all":
            ok = all(holds_reference(c, effect) for c in value)
        elif key == "any":
            ok = any(holds_reference(c, effect) for c in value)
        elif key == "not":
            ok = not any(holds_reference(c, effect) for c in _many(value))
        else:
            ok = any(matcher_reference(value, v) for v in field_values(effect, key))
        if not ok:
            return False
    return True


def one_or_many(options: list[str]) -> st.SearchStrategy[Any]:
    return st.sampled_from(options) | st.lists(st.sampled_from(options), min_size=1, max_size=3)


leaves = st.one_of(
    st.fixed_dictionaries({"effect": one_or_many(list(EFFECT_KINDS))}),
    st.fixed_dictionaries({"path": st.fixed_dictionaries({"glob": one_or_many(GLOBS)})}),
    st.fixed_dictionaries({"path": st.fixed_dictionaries({"contains": one_or_many(CONTAINS)})}),
    st.fixed_dictionaries({"command": st.fixed_dictionaries({"regex": one_or_many(REGEXES)})}),
    st.fixed_dictionaries({"command": st.fixed_dictionaries({"contains": one_or_many(CONTAINS)})}),
    st.fixed_dictionaries({"content": st.fixed_dictionaries({"regex": one_or_many(REGEXES)})}),
    st.fixed_dictionaries({"argv": one_or_many(WORDS)}),
    st.fixed_dictionaries(
        {
            "argv": st.fixed_dictionaries(
                {"regex": one_or_many(REGEXES), "contains": one_or_many(CONTAINS)}
            )
        }
    ),
    st.fixed_dictionaries({"opaque": st.booleans()}),
    st.fixed_dictionaries({"url": st.fixed_dictionaries({"contains": one_or_many(CONTAINS)})}),
    st.fixed_dictionaries({"text": st.fixed_dictionaries({"regex": one_or_many(REGEXES)})}),
)


def combine(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    many = st.lists(children, min_size=0, max_size=3)
    return st.one_of(
        st.builds(lambda cs: {"all": cs}, many),
        st.builds(lambda cs: {"any": cs}, many),
        st.builds(lambda c: {"not": c}, children),
        st.builds(lambda cs: {"not": cs}, many),
        st.builds(lambda a, b: {**a, **b}, children, leaves),
    )


conditions = st.recursive(leaves, combine, max_leaves=6)
rules = st.lists(st.tuples(conditions, st.lists(conditions, max_size=1)), min_size=1, max_size=5)
paths = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4).map(lambda s: "/" + "/".join(s))
texts = st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join)
effects = st.builds(
    lambda kind, path, argv, content, opaque, url, text: Effect(
        kind,
        path=path,
        argv0=argv[0] if argv else None,
        argv=tuple(argv),
        command=" ".join(argv) if argv else None,
        content=content,
        opaque=opaque,
        url=url,
        text=text,
    ),
    st.sampled_from(EFFECT_KINDS),
    st.none() | paths,
    st.lists(st.sampled_from(WORDS), max_size=4),
    st.none() | texts,
    st.booleans(),
    st.none() | st.sampled_from(["https://x.test/--", "rm.py"]),
    st.none() | texts,
)


@settings(max_examples=150, deadline=None)
@given(rules, st.lists(effects, min_size=1, max_size=3))
def test_engine_agrees_with_naive_evaluation(
    rule_specs: list[tuple[dict[str, Any], list[dict[str, Any]]]], call_effects: list[Effect]
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        for index, (match, exceptions) in enumerate(rule_specs):
            excepted = [{"name": f"e{i}", "match": c} for i, c in enumerate(exceptions)]
            write_rule(Path(directory), f"r{index}", match, exceptions=excepted)
        engine = Engine(RuleSet.load([directory]))
        call = ToolCall("c", "bash", {})
        found = engine.check_effects(call_effects, call=call, harness="pi")

    expected: list[tuple[str, Effect]] = []
    fired: set[int] = set()
    for effect in call_effects:
        for index, (match, exceptions) in enumerate(rule_specs):
            if index in fired or not holds_reference(match, effect):
                continue
            if any(holds_reference(c, effect) for c in exceptions):
                continue
            fired.add(index)
            expected.append((f"r{index}", effect))
    assert [(f.rule_id, f.effect) for f in found] == expected


def test_glob_reference_agrees_on_the_documented_examples() -> None:
    assert glob_reference("tests/**", "/workspace/tests/a.py")
    assert glob_reference("test_*.py", "/workspace/pkg/test_x.py")
    assert not glob_reference("/tests/**", "/workspace/tests/a.py")


def clauses_of(match: dict[str, Any], kind: str) -> set[frozenset[str]] | None:
    """The clauses ``required_hits`` finds for ``match``, as sets of patterns."""
    with tempfile.TemporaryDirectory() as directory:
        write_rule(Path(directory), "r", match)
        rules = RuleSet.load([directory])
    patterns = {
        (name, index): regex
        for name in rules.pattern_bank.fields()
        for regex, index in rules.pattern_bank._patterns[name].items()
    }
    found = required_hits(rules.rules[0].condition, kind)
    return None if found is None else {frozenset(patterns[hit] for hit in c) for c in found}


def test_required_hits_leave_out_branches_of_other_kinds() -> None:
    match = {
        "any": [
            {"all": [{"effect": "write"}, {"opaque": True}]},
            {"all": [{"effect": "say"}, {"text": {"regex": "a"}}, {"text": {"regex": "b"}}]},
        ]
    }
    assert clauses_of(match, "say") == {frozenset({"a"}), frozenset({"b"})}
    assert clauses_of(match, "write") == set()
    assert clauses_of(match, "exec") is None


def test_required_hits_multiply_out_an_any_of_alls() -> None:
    match = {
        "any": [
            {"all": [{"text": {"regex": "a"}}, {"text": {"regex": "b"}}]},
            {"all": [{"text": {"regex": "c"}}, {"text": {"regex": "d"}}]},
        ]
    }
    assert clauses_of(match, "say") == {
        frozenset({"a", "c"}),
        frozenset({"a", "d"}),
        frozenset({"b", "c"}),
        frozenset({"b", "d"}),
    }


def test_required_hits_sum_up_an_any_too_large_to_multiply_out() -> None:
    match = {"any": [{"all": [{"text": {"regex": f"{c}{i}"}} for i in range(3)]} for c in "abcd"]}
    assert MAX_CLAUSES < 3**4
    assert clauses_of(match, "say") == {frozenset({"a0", "b0", "c0", "d0"})}
