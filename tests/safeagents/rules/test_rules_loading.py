"""Loading rules: path forms, every error kind with its exact position, vars and macros."""

from __future__ import annotations

from pathlib import Path

import pytest
from rules_testkit import write_pack, write_rule

from safeagents.rules import RuleError, RuleLoadError, RuleSet, bundled_rules_path

HEADER = "id: {id}\ncategory: other\nseverity: high\naction: reject\ndescription: d\nmessage: m\n"


def load_errors(*paths: Path, **kwargs: object) -> list[str]:
    with pytest.raises(RuleLoadError) as caught:
        RuleSet.load(list(paths), **kwargs)  # type: ignore[arg-type]
    assert str(caught.value) == "\n".join(str(e) for e in caught.value.errors)
    return [str(error) for error in caught.value.errors]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_rule_error_formats_position_and_keeps_fields() -> None:
    error = RuleError("r.yaml", 3, 11, "boom")
    assert (error.file, error.line, error.col, error.message) == ("r.yaml", 3, 11, "boom")
    assert str(error) == "r.yaml:3:11: boom"
    assert str(RuleError("--var", 0, 0, "unknown var")) == "--var: unknown var"


@pytest.mark.parametrize(
    "body, position, message",
    [
        (
            "severity: urgent\n",
            "3:11",
            "severity: expected one of info, low, medium, high, critical, got 'urgent'",
        ),
        ("action: block\n", "4:9", "action: expected one of reject, flag, warn, got 'block'"),
        ("severty: high\n", "7:1", "unknown field 'severty' (did you mean 'severity'?)"),
        ("enabled: maybe\n", "7:10", "enabled: expected true or false, got 'maybe'"),
        (
            "match:\n  pth: {glob: x}\n",
            "8:3",
            "unknown field 'pth' (did you mean 'path'?)",
        ),
        (
            "match:\n  path: {globb: x}\n",
            "8:10",
            "unknown matcher 'globb' (expected one of equals, in, glob, regex, contains)",
        ),
        ("match:\n  command: {regex: '('}\n", "8:20", "invalid RE2 regex '(': missing )"),
        ("match:\n  path: {glob: '[ab'}\n", "8:16", "invalid glob '[ab': unclosed '['"),
        (
            "match:\n  path: {glob: $tests_files}\n",
            "8:16",
            "unknown list or var '$tests_files'",
        ),
        (
            "match:\n  effect: remove\n",
            "8:11",
            "effect: expected one of exec, read, write, delete, move, network, search, say, "
            "got 'remove'",
        ),
        ("match:\n  opaque: 'yes'\n", "8:11", "opaque: expected true or false, got 'yes'"),
        ("match:\n  path: 3\n", "8:9", "path: expected text, got int 3"),
        (
            "match:\n  effect: {glob: 'x*'}\n",
            "8:12",
            "effect: matcher 'glob' needs a text field; use equals or in",
        ),
        ("match:\n  any: {path: x}\n", "8:8", "any: expected a list of conditions, got a mapping"),
        ("match:\n  macro: nope\n", "8:10", "unknown macro 'nope' (the pack defines no macros)"),
        ("match: []\n", "7:8", "expected a condition (a mapping), got a list"),
        ("match:\n  path: {}\n", "8:9", "path: empty matcher"),
        (
            "match:\n  path: {equals: [a, b]}\n",
            "8:18",
            "path: equals takes one value; use in for a list",
        ),
    ],
)
def test_each_error_names_file_line_col(
    tmp_path: Path, body: str, position: str, message: str
) -> None:
    if body.startswith(("severity", "action")):
        key = body.split(":")[0]
        text = HEADER.format(id="r").replace(
            f"{key}: {'high' if key == 'severity' else 'reject'}\n", body
        )
        text += "match: {effect: delete}\n"
    elif body.startswith("match"):
        text = HEADER.format(id="r") + body
    else:
        text = HEADER.format(id="r") + body + "match: {effect: delete}\n"
    rule = write(tmp_path / "r.yaml", text)
    assert load_errors(tmp_path) == [f"{rule}:{position}: {message}"]


def test_missing_field_and_id_mismatch(tmp_path: Path) -> None:
    rule = write(
        tmp_path / "y.yaml",
        "id: x\ncategory: other\nseverity: low\naction: warn\n"
        "description: d\nmatch: {effect: exec}\n",
    )
    assert load_errors(rule) == [
        f"{rule}:1:1: missing required field 'message'",
        f"{rule}:1:5: rule id 'x' must match its file name 'y.yaml'",
    ]
    rule.write_text(HEADER.format(id="x") + "match: {effect: exec}\n")
    assert load_errors(rule) == [f"{rule}:1:5: rule id 'x' must match its file name 'y.yaml'"]


def test_yaml_syntax_error_carries_the_mark(tmp_path: Path) -> None:
    rule = write(tmp_path / "r.yaml", HEADER.format(id="r") + "match:\n  path: [a, b\n")
    [error] = load_errors(rule)
    assert error.startswith(f"{rule}:9:1: invalid YAML: ")


def test_duplicate_keys_are_reported(tmp_path: Path) -> None:
    rule = write(tmp_path / "r.yaml", HEADER.format(id="r") + "match: {effect: exec}\nid: r\n")
    assert load_errors(rule) == [f"{rule}:8:1: duplicate key 'id'"]


def test_all_errors_across_files_are_collected(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", HEADER.format(id="a") + "match: {effect: nope}\n")
    write(tmp_path / "b.yaml", HEADER.format(id="b") + "match: {path: {regex: '[x'}}\n")
    errors = load_errors(tmp_path)
    assert len(errors) == 2
    assert "a.yaml:7:17: effect" in errors[0] and "b.yaml:7:23: invalid RE2 regex" in errors[1]


def test_path_forms(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    write_pack(packs / "one", "one", lists={"names": ["x.py"]})
    write_rule(packs / "one", "uses-list", {"path": {"glob": "$names"}})
    (packs / "one" / "uses-list.test.yaml").write_text("cases: []\n")
    write_pack(packs / "two", "two")
    write_rule(packs / "two", "plain", {"effect": "exec"})
    loose = tmp_path / "loose"
    write_rule(loose, "loose-rule", {"effect": "read"})

    assert [r.id for r in RuleSet.load([packs])] == ["uses-list", "plain"]
    assert [p.name for p in RuleSet.load([packs]).packs] == ["one", "two"]
    assert [r.id for r in RuleSet.load([packs / "one"])] == ["uses-list"]
    single = RuleSet.load([packs / "one" / "uses-list.yaml"])  # pack.yaml beside it applies
    assert single.get("uses-list").pack == "one"
    assert [r.id for r in RuleSet.load([loose])] == ["loose-rule"]
    assert RuleSet.load([loose]).get("loose-rule").pack == "loose"
    both = RuleSet.load([packs, packs / "one", loose])  # overlapping paths load once
    assert [r.id for r in both] == ["uses-list", "plain", "loose-rule"]


def test_bad_paths(tmp_path: Path) -> None:
    fixture = write(tmp_path / "x.test.yaml", "cases: []\n")
    errors = load_errors(tmp_path / "missing", fixture, write(tmp_path / "e" / "a.txt", ""))
    assert errors[0] == f"{tmp_path / 'missing'}: no such file or directory"
    assert "fixture file, not a rule" in errors[1]
    assert "not a rule file" in errors[2]
    assert "no rules found" in load_errors(tmp_path / "e")[0]


def test_get_and_duplicate_ids(tmp_path: Path) -> None:
    write_rule(tmp_path / "a", "same", {"effect": "exec"})
    rules = RuleSet.load([tmp_path / "a"])
    with pytest.raises(KeyError, match="did you mean 'same'"):
        rules.get("sane")
    second = write_rule(tmp_path / "b", "same", {"effect": "exec"})
    assert load_errors(tmp_path) == [
        f"{second}:1:5: duplicate rule id 'same' (also in {tmp_path / 'a' / 'same.yaml'})"
    ]


def test_vars_lists_and_overrides(tmp_path: Path) -> None:
    write_pack(
        tmp_path,
        vars={"hidden": ["/tests", "/oracle"], "one": "/solo"},
        lists={"dirs": ["$hidden", "/extra"]},
    )
    write_rule(tmp_path, "r", {"path": {"glob": "$dirs/**"}})
    pack = RuleSet.load([tmp_path]).packs[0]
    assert pack.vars == {"hidden": ("/tests", "/oracle"), "one": ("/solo",)}
    assert pack.lists == {"dirs": ("/tests", "/oracle", "/extra")}
    overridden = RuleSet.load([tmp_path], vars={"hidden": " /a, /b ,"}).packs[0]
    assert overridden.lists["dirs"] == ("/a", "/b", "/extra")
    assert RuleSet.load([tmp_path], vars={"hidden": ["/c"]}).packs[0].vars["hidden"] == ("/c",)
    [error] = load_errors(tmp_path, vars={"hiden": "/x"})
    assert error == "--var: unknown var 'hiden' (did you mean 'hidden'?) (known vars: hidden, one)"
    [error] = load_errors(tmp_path, vars={"dirs": "/x"})
    assert error == "--var: 'dirs' is a list, not a var: lists cannot be overridden"


def test_pack_errors(tmp_path: Path) -> None:
    pack = write(
        tmp_path / "pack.yaml",
        "name: p\nvars:\n  a: [$b]\n  b: [$a]\n  bad-name: x\n  num: 3\n"
        "lists:\n  a: [x]\nmacros:\n  m1: {macro: m2}\n  m2: {macro: m1}\n  m3: {pth: x}\n",
    )
    errors = load_errors(tmp_path)
    assert f"{pack}:4:7: reference cycle: a -> b -> a" in errors
    assert f"{pack}:5:3: invalid name 'bad-name': use letters, digits and _" in errors
    assert f"{pack}:6:8: vars.num: expected text or a list of text, got int 3" in errors
    assert f"{pack}:8:3: 'a' is both a var and a list (they share one namespace)" in errors
    assert f"{pack}:11:15: macro cycle: m1 -> m2 -> m1" in errors
    assert f"{pack}:12:8: unknown field 'pth' (did you mean 'path'?)" in errors


def test_unknown_pack_key_and_duplicate_pack_names(tmp_path: Path) -> None:
    pack = write(tmp_path / "a" / "pack.yaml", "name: p\nlist: {}\n")
    assert load_errors(tmp_path / "a") == [
        f"{pack}:2:1: unknown field 'list' (did you mean 'lists'?)"
    ]
    pack.write_text("name: same\n")
    second = write(tmp_path / "b" / "pack.yaml", "name: same\n")
    [error] = load_errors(tmp_path)
    assert error == f"{second}:1:7: duplicate pack name 'same' (also in {pack})"


def test_unknown_macro_suggests_a_close_name(tmp_path: Path) -> None:
    write_pack(tmp_path, macros={"is_test": {"path": "x"}})
    rule = write_rule(tmp_path, "r", {"macro": "is_tset"})
    [error] = load_errors(tmp_path)
    assert error.endswith("unknown macro 'is_tset' (did you mean 'is_test'?)")
    assert error.startswith(f"{rule}:")


def test_rule_records(tmp_path: Path) -> None:
    write_pack(tmp_path, "mine")
    write_rule(tmp_path, "r", {"effect": "exec"}, enabled=False, severity="low", action="warn")
    rule = RuleSet.load([tmp_path]).get("r")
    assert (rule.enabled, rule.severity, rule.action, rule.pack) == (False, "low", "warn", "mine")
    assert rule.source == tmp_path / "r.yaml"
    assert rule.message.startswith("Blocked by safeagents")


def test_bundled_rules_path_prefers_the_checkout() -> None:
    import safeagents

    checkout = Path(safeagents.__file__).parent.parent / "rules"
    expected = (
        checkout if checkout.is_dir() else Path(safeagents.__file__).parent / "_bundled_rules"
    )
    assert bundled_rules_path() == expected


def test_every_problem_of_a_rule_file_is_reported_at_once(tmp_path: Path) -> None:
    rule = write(
        tmp_path / "named.yaml",
        "id: other-name\ncategory: nosuch\nseverity: urgent\naction: reject\ndescription: d\n"
        "message: m\nmatch:\n  pth: /x\nexceptions:\n  - name: e\n    match: {effct: read}\n",
    )
    errors = load_errors(tmp_path)
    assert any(e.startswith(f"{rule}:2:11: category: expected one of") for e in errors)
    assert any(e.startswith(f"{rule}:3:11: severity: expected one of") for e in errors)
    assert f"{rule}:1:5: rule id 'other-name' must match its file name 'named.yaml'" in errors
    assert any(e.startswith(f"{rule}:8:3: unknown field 'pth'") for e in errors)
    assert any(e.startswith(f"{rule}:11:13: unknown field 'effct'") for e in errors)
