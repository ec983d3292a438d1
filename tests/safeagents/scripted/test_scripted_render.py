from typing import Any

import pytest

from safeagents.scripted import OfferedTool, RenderError, Script, Shell, Step, Tool, Write
from safeagents.scripted._render import add_file_patch, render_step


def function(name: str, required: list[str], **properties: str) -> OfferedTool:
    schema = {
        "type": "object",
        "properties": {key: {"type": kind} for key, kind in properties.items()},
        "required": required,
    }
    return OfferedTool(name, "function", schema)


OPENCODE = [
    function("bash", ["command"], command="string", timeout="integer", workdir="string"),
    function("write", ["content", "filePath"], content="string", filePath="string"),
]
PI = [
    function("bash", ["command"], command="string", timeout="number"),
    function("write", ["path", "content"], path="string", content="string"),
]
HERMES = [
    function("terminal", ["command"], command="string", background="boolean"),
    function("write_file", ["path", "content"], path="string", content="string"),
]
CLAUDE = [
    function("Bash", ["command"], command="string", description="string"),
    function("Write", ["file_path", "content"], file_path="string", content="string"),
]
CODEX_UNIFIED = [function("exec_command", ["cmd"], cmd="string", login="boolean")]
CODEX_SHELL = [
    function("shell", ["command"], command="array", workdir="string"),
    OfferedTool("apply_patch", "custom"),
]


def only_call(step: Step, tools: list[OfferedTool]) -> tuple[str, str, Any]:
    turn = render_step(4, step, tools)
    assert turn.step == 4
    (call,) = turn.calls
    assert call.call_id == "s4_0"
    return call.name, call.kind, call.arguments if call.input is None else call.input


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        (OPENCODE, ("bash", "function", {"command": "make"})),
        (PI, ("bash", "function", {"command": "make"})),
        (HERMES, ("terminal", "function", {"command": "make"})),
        (CLAUDE, ("Bash", "function", {"command": "make"})),
        (CODEX_UNIFIED, ("exec_command", "function", {"cmd": "make"})),
        (CODEX_SHELL, ("shell", "function", {"command": ["bash", "-lc", "make"]})),
        (
            [OfferedTool("local_shell", "local_shell")],
            ("local_shell", "local_shell", {"type": "exec", "command": ["bash", "-lc", "make"]}),
        ),
    ],
)
def test_shell_steps_use_the_harness_shell_tool(
    tools: list[OfferedTool], expected: tuple[str, str, Any]
) -> None:
    assert only_call(Step((Shell("make"),)), tools) == expected


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        (OPENCODE, ("write", "function", {"filePath": "a.py", "content": "x\n"})),
        (PI, ("write", "function", {"path": "a.py", "content": "x\n"})),
        (HERMES, ("write_file", "function", {"path": "a.py", "content": "x\n"})),
        (CLAUDE, ("Write", "function", {"file_path": "a.py", "content": "x\n"})),
        (CODEX_SHELL, ("apply_patch", "custom", add_file_patch("a.py", "x\n"))),
        (
            CODEX_UNIFIED,
            ("exec_command", "function", {"cmd": "cat > a.py <<'SCRIPTED_EOF'\nx\nSCRIPTED_EOF"}),
        ),
    ],
)
def test_write_steps_use_the_write_tool_or_a_patch_or_a_heredoc(
    tools: list[OfferedTool], expected: tuple[str, str, Any]
) -> None:
    assert only_call(Step((Write("a.py", "x\n"),)), tools) == expected


def test_add_file_patch_prefixes_every_line() -> None:
    patch = add_file_patch("src/m.py", "a\n\nb")
    assert patch == "*** Begin Patch\n*** Add File: src/m.py\n+a\n+\n+b\n*** End Patch\n"


def test_json_apply_patch_and_str_replace_editor() -> None:
    json_patch = [function("apply_patch", ["input"], input="string")]
    name, kind, arguments = only_call(Step((Write("f", "1\n"),)), json_patch)
    assert (name, kind, arguments) == (
        "apply_patch",
        "function",
        {"input": add_file_patch("f", "1\n")},
    )
    editor = [
        function(
            "str_replace_editor",
            ["command", "path"],
            command="string",
            path="string",
            file_text="string",
        )
    ]
    assert only_call(Step((Write("f", "1\n"),)), editor)[2] == {
        "path": "f",
        "file_text": "1\n",
        "command": "create",
    }


def test_required_arguments_the_script_does_not_set_are_filled() -> None:
    schema = {
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "description": {"type": "string"},
            "mode": {"type": "string", "enum": ["fg", "bg"]},
            "timeout": {"type": "integer", "default": 30},
            "pty": {"type": "boolean"},
        },
        "required": ["command", "description", "mode", "timeout", "pty"],
    }
    _, _, arguments = only_call(Step((Shell("ls"),)), [OfferedTool("bash", "function", schema)])
    assert arguments == {
        "command": "ls",
        "description": "scripted step",
        "mode": "fg",
        "timeout": 30,
        "pty": False,
    }


def test_explicit_tool_calls_pass_through_verbatim() -> None:
    custom = [OfferedTool("apply_patch", "custom")]
    assert only_call(Step((Tool("apply_patch", "PATCH"),)), custom) == (
        "apply_patch",
        "custom",
        "PATCH",
    )
    assert only_call(Step((Tool("apply_patch", "PATCH"),)), PI) == (
        "apply_patch",
        "custom",
        "PATCH",
    )
    assert only_call(Step((Tool("edit", {"path": "p"}),)), PI) == (
        "edit",
        "function",
        {"path": "p"},
    )
    json_patch = [function("apply_patch", ["input"], input="string")]
    assert only_call(Step((Tool("apply_patch", "P"),)), json_patch)[2] == {"input": "P"}


def test_parallel_steps_render_every_call_and_keep_text() -> None:
    step = Script.from_data([{"say": "Two things.", "parallel": [{"shell": "a"}, {"shell": "b"}]}])
    turn = render_step(0, step.steps[0], PI)
    assert turn.text == "Two things."
    assert [(call.call_id, call.arguments) for call in turn.calls] == [
        ("s0_0", {"command": "a"}),
        ("s0_1", {"command": "b"}),
    ]
    assert turn.summary()["calls"][1] == {
        "id": "s0_1",
        "name": "bash",
        "arguments": {"command": "b"},
    }


def test_missing_shell_tool_is_a_render_error() -> None:
    with pytest.raises(RenderError, match="no shell tool"):
        render_step(0, Step((Shell("ls"),)), [function("read", ["path"], path="string")])
    with pytest.raises(RenderError, match="no shell tool"):
        render_step(0, Step((Write("a", "b"),)), [function("read", ["path"], path="string")])
