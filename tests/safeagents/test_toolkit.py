"""The plugin toolkit: its exports, argument decoding, argv unwrapping and URL hosts."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import safeagents.toolkit
from safeagents import AnalysisContext
from safeagents.toolkit import ToolArgs, argv_effects, editor_effects, network

CTX = AnalysisContext(cwd="/workspace")


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in dir(safeagents.toolkit) if not name.startswith("_")}
    assert sorted(safeagents.toolkit.__all__) == sorted(public)


def test_every_name_is_documented() -> None:
    module_doc = inspect.getdoc(safeagents.toolkit) or ""
    for name in safeagents.toolkit.__all__:
        value = getattr(safeagents.toolkit, name)
        if callable(value):
            assert value.__doc__ and value.__doc__.strip(), name
        else:
            assert f"``{name}``" in module_doc, name


def test_tool_args_methods_are_documented() -> None:
    for name in vars(ToolArgs):
        if not name.startswith("_") and callable(getattr(ToolArgs, name)):
            assert inspect.getdoc(getattr(ToolArgs, name)), name


def test_tool_args_shows_the_public_module() -> None:
    assert ToolArgs.__module__ == "safeagents.toolkit"


@pytest.mark.parametrize(
    ("arguments", "mapping", "text"),
    [
        ({"a": 1}, {"a": 1}, None),
        ('{"a": 1}', {"a": 1}, None),
        ('"quoted"', {}, "quoted"),
        ("raw text", {}, "raw text"),
        ("[1, 2]", {}, "[1, 2]"),
        ("   ", {}, None),
        (42, {}, None),
    ],
)
def test_tool_args_decoding(arguments: Any, mapping: dict[str, Any], text: str | None) -> None:
    args = ToolArgs.of(arguments)
    assert (dict(args.mapping), args.text) == (mapping, text)


def test_tool_args_accessors() -> None:
    args = ToolArgs.of({"a": None, "b": 3, "c": "s", "flag": "true", "edits": '[{"x": 1}]'})
    assert args.value("a", "b") == 3
    assert args.string("b", "c") == "s"
    assert args.flag("flag") and not args.flag("b")
    assert args.items("edits") == [{"x": 1}]
    assert args.items("c") == []


def test_context_follows_workdir() -> None:
    assert ToolArgs.of({"workdir": "sub"}).context(CTX).cwd == "/workspace/sub"
    assert ToolArgs.of({"working_directory": "/x"}).context(CTX).cwd == "/x"
    assert ToolArgs.of({"workdir": 3}).context(CTX) is CTX


def test_argv_apply_patch_and_empty() -> None:
    patch = "*** Begin Patch\n*** Delete File: a.py\n*** End Patch"
    assert [(e.kind, e.path) for e in argv_effects(["applypatch", patch], CTX)] == [
        ("delete", "/workspace/a.py")
    ]
    assert argv_effects([], CTX) == []


def test_network_host() -> None:
    assert network("https://user@Example.com:8080/x").host == "example.com"
    assert network("example.org/path").host == "example.org"


def test_editor_needs_a_path_and_a_known_command() -> None:
    assert editor_effects("view", ToolArgs.of({"path": "  "}), CTX) == []
    assert editor_effects("frobnicate", ToolArgs.of({"path": "a.py"}), CTX) == []
