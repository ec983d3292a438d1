from pathlib import Path

import pytest

from safeagents.scripted import Script, ScriptError, Shell, Step, Tool, Write
from safeagents.scripted._script import parse_step


def test_parses_every_step_form() -> None:
    script = Script.from_data(
        [
            {"shell": "ls", "say": "Looking around."},
            {"write": {"path": "a.py", "content": "x = 1\n"}},
            {"tool": "todowrite", "arguments": {"todos": []}},
            {"tool": "apply_patch", "arguments": "*** Begin Patch\n*** End Patch"},
            {"parallel": [{"shell": "pwd"}, {"write": {"path": "b", "content": ""}}]},
            {"say": "done"},
        ]
    )
    assert script.steps == (
        Step((Shell("ls"),), "Looking around."),
        Step((Write("a.py", "x = 1\n"),)),
        Step((Tool("todowrite", {"todos": []}),)),
        Step((Tool("apply_patch", "*** Begin Patch\n*** End Patch"),)),
        Step((Shell("pwd"), Write("b", ""))),
        Step(text="done"),
    )
    assert script.steps[-1].is_final
    assert not script.steps[0].is_final


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"shell": ["ls"]}, "'shell' must be a string"),
        ({"write": {"content": "x"}}, "'write' needs"),
        ({"write": {"path": "a", "content": 3}}, "'write.content'"),
        ({"tool": "x", "arguments": [1]}, "'tool' needs"),
        ({"parallel": []}, "non-empty list"),
        ({"parallel": ["ls"]}, "an action must be a mapping"),
        ({"run": "ls"}, "expected one of"),
        ({"say": 3}, "'say' must be a string"),
        ({"think": 3, "say": "x"}, "'think' must be a string"),
        ({}, "expected one of"),
        (7, "a step must be a mapping"),
    ],
)
def test_rejects_malformed_steps_with_the_reason(raw: object, message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        parse_step(raw)  # type: ignore[arg-type]


def test_a_bare_string_is_a_final_answer() -> None:
    assert parse_step("bye") == Step(text="bye")


def test_step_index_follows_the_number_of_tool_results() -> None:
    script = Script.from_data([{"shell": "a"}, {"shell": "b"}, {"say": "end"}])
    assert [script.step_at(results)[0] for results in range(5)] == [0, 1, 2, 3, 3]
    assert script.step_at(3)[1] == Step(text=script.finished_text)


def test_parallel_steps_consume_one_result_per_call() -> None:
    script = Script.from_data(
        [{"parallel": [{"shell": "a"}, {"shell": "b"}]}, {"shell": "c"}, {"say": "end"}]
    )
    # a partially answered parallel step moves on rather than repeating calls
    assert [script.step_at(results)[0] for results in range(5)] == [0, 1, 1, 2, 3]


def test_options_and_file_loading(tmp_path: Path) -> None:
    yaml_file = tmp_path / "script.yaml"
    yaml_file.write_text(
        "finished_text: over\nside_text: A title\nsteps:\n  - shell: ls\n  - say: ok\n"
    )
    script = Script.load(yaml_file)
    assert (script.finished_text, script.side_text) == ("over", "A title")
    assert script.steps == (Step((Shell("ls"),)), Step(text="ok"))
    json_file = tmp_path / "script.json"
    json_file.write_text('[{"say": "hi"}]')
    assert Script.load(json_file).steps == (Step(text="hi"),)
    with pytest.raises(ScriptError, match="list of steps"):
        Script.from_data("ls")


def test_a_step_may_think_before_it_answers_or_acts() -> None:
    assert parse_step({"think": "hm", "say": "bye"}) == Step(text="bye", thinking="hm")
    assert parse_step({"think": "hm", "shell": "ls"}) == Step((Shell("ls"),), None, "hm")
    assert parse_step({"think": "hm"}) == Step(thinking="hm")
