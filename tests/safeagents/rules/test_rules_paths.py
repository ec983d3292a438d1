"""``list_matcher``: a pack list of globs as the predicate detectors get for test paths."""

from __future__ import annotations

from pathlib import Path

from safeagents._actions import Effect, ToolCall
from safeagents._detector import CallContext, Detector
from safeagents.rules import Engine, Pack, RuleSet, list_matcher


def _pack(name: str, **lists: tuple[str, ...]) -> Pack:
    return Pack(name, "", Path(name), lists=lists)


def test_the_lists_of_every_pack_count_as_globs_of_the_rule_dsl() -> None:
    matches = list_matcher([_pack("a", t=("tests/**",)), _pack("b", t=("*.spec.*",))], "t")
    assert matches("/w/tests/x.py") and matches("tests") and matches("src/a.spec.ts")
    assert not matches("/w/latest/x.py") and not matches("/w/spec.ts")


def test_no_such_list_matches_nothing() -> None:
    assert not list_matcher([_pack("a", other=("**",))], "test_files")("/w/tests/x.py")


class _Seen(Detector):
    name = "seen"

    def __init__(self) -> None:
        self.contexts: list[CallContext] = []

    def matches(self, effect: Effect, context: CallContext) -> bool:
        self.contexts.append(context)
        return False


def test_the_engine_hands_detectors_the_packs_test_files(tmp_path: Path) -> None:
    (tmp_path / "pack.yaml").write_text(
        "name: p\ndescription: d\nlists:\n  test_files: [checks/**]\n"
    )
    (tmp_path / "r.yaml").write_text(
        "id: r\ncategory: other\nseverity: low\naction: warn\ndescription: d\n"
        "message: m\nmatch: {detector: seen}\n"
    )
    seen = _Seen()
    engine = Engine(RuleSet.load([tmp_path]), {"seen": seen})
    engine.check_effects([Effect("write", path="/w/a.py")], call=ToolCall("c", "w"), harness="g")
    (context,) = seen.contexts
    assert context.is_test_path("/w/checks/a.py") and not context.is_test_path("/w/tests/a.py")
