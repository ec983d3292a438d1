"""No built-in harness plugin raises on malformed arguments, whatever the tool."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_plugins._common import ToolMapHarness
from safeagents._actions import AnalysisContext, Effect, ToolCall
from safeagents._harness import Harness
from safeagents._registry import load_registry

CTX = AnalysisContext(cwd="/workspace")
HARNESSES: list[Harness] = list(load_registry(entry_points=False).harnesses.values())
ARGUMENT_NAMES = [
    *("command", "cmd", "path", "file_path", "filePath", "notebook_path", "content", "edits"),
    *("oldText", "newText", "oldString", "newString", "old_string", "new_string", "old_str"),
    *("new_str", "patchText", "patch", "input", "workdir", "working_directory", "cwd", "action"),
    *("tool_calls", "tool", "parameters", "code", "url", "urls", "pattern", "chars", "data"),
    *("mode", "new_source", "file_text", "insert_line", "query", "replaceAll", "replace_all"),
]
SAMPLE_TEXT = [
    "",
    "rm -rf tests",
    "*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch",
    "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
    "~",
    "../..",
    "view",
    "create",
    "patch",
    "write",
    "https://example.com/x",
    "{",
    "[1, 2]",
]
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.sampled_from(SAMPLE_TEXT)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(ARGUMENT_NAMES) | st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)
ARGUMENTS = (
    st.dictionaries(st.sampled_from(ARGUMENT_NAMES), JSON_VALUES, max_size=6)
    | st.sampled_from(SAMPLE_TEXT)
    | st.text(max_size=40)
    | JSON_VALUES
)


def tool_names(harness: Harness) -> list[str]:
    handlers = harness.handlers if isinstance(harness, ToolMapHarness) else {}
    return sorted({*harness.tools, *handlers, "unknown_tool", "browser_x", "skill_x"})


def assert_effects(result: object) -> None:
    assert result is None or (
        isinstance(result, list) and all(isinstance(e, Effect) for e in result)
    )


@pytest.mark.parametrize("harness", HARNESSES, ids=lambda h: h.name)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_arguments_never_raise(harness: Harness, data: st.DataObject) -> None:
    tool = data.draw(st.sampled_from(tool_names(harness)))
    arguments: Any = data.draw(ARGUMENTS)
    assert_effects(harness.effects(ToolCall("c", tool, arguments), CTX))


MALFORMED: list[Any] = [
    5,
    None,
    [1, 2],
    "not json",
    "{",
    '"a json string"',
    {"command": 5},
    {"command": [1, None, {"x": 1}]},
    {"command": []},
    {"cmd": {"x": 1}},
    {"path": ["a"], "content": 3},
    {"edits": "garbage"},
    {"edits": [1, "x", {"oldText": 5}, {"old_string": None}]},
    {"tool_calls": "x"},
    {"tool_calls": [{"tool": "batch", "parameters": 7}]},
    {"action": "x"},
    {"action": {"command": "ls"}},
    {"workdir": 5, "command": "ls"},
    {"workdir": "", "command": "ls"},
    {"url": 3, "urls": [None, 4]},
    {"code": None},
    {"patchText": 12},
    {"mode": "patch"},
]


@pytest.mark.parametrize("harness", HARNESSES, ids=lambda h: h.name)
@pytest.mark.parametrize("arguments", MALFORMED, ids=repr)
def test_known_malformed_shapes(harness: Harness, arguments: Any) -> None:
    for tool in tool_names(harness):
        assert_effects(harness.effects(ToolCall("c", tool, arguments), CTX))
