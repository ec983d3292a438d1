"""Render abstract script actions into the calling harness's own tool schema."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from safeagents.scripted._script import Action, Shell, Step, Tool, Write

__all__ = ["OfferedTool", "RenderError", "RenderedCall", "Turn", "render_step", "render_text_step"]

ToolKind = Literal["function", "custom", "local_shell"]

SHELL_TOOLS = (
    "bash",
    "Bash",
    "terminal",
    "shell",
    "shell_command",
    "exec_command",
    "execute_bash",
    "run_shell_command",
    "local_shell",
)
WRITE_TOOLS = ("write", "Write", "write_file", "create_file", "str_replace_editor", "apply_patch")
PATH_FIELDS = ("filePath", "file_path", "path")
CONTENT_FIELDS = ("content", "file_text", "contents")
PATCH_FIELDS = ("input", "patch", "patchText")


class RenderError(ValueError):
    """The harness offers no tool able to carry out a scripted action."""


@dataclass(frozen=True, slots=True)
class OfferedTool:
    """A tool offered by a request: a JSON-schema function, a freeform tool, or local_shell."""

    name: str
    kind: ToolKind = "function"
    schema: Mapping[str, Any] = field(default_factory=dict)

    @property
    def properties(self) -> Mapping[str, Any]:
        props = self.schema.get("properties")
        return props if isinstance(props, Mapping) else {}

    @property
    def required(self) -> Sequence[str]:
        required = self.schema.get("required")
        return [str(name) for name in required] if isinstance(required, list) else []


@dataclass(frozen=True, slots=True)
class RenderedCall:
    """A tool call in the harness's schema: ``arguments`` for function tools, else ``input``."""

    call_id: str
    name: str
    kind: ToolKind
    arguments: Mapping[str, Any] | None = None
    input: str | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """What the scripted model answers: optional text and the tool calls (possibly none)."""

    text: str | None
    calls: tuple[RenderedCall, ...] = ()
    step: int | None = None
    reasoning: str | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "text": self.text,
            "calls": [
                {"id": call.call_id, "name": call.name, "arguments": call.arguments}
                if call.input is None
                else {"id": call.call_id, "name": call.name, "input": call.input}
                for call in self.calls
            ],
        }


def _pick(tools: Mapping[str, OfferedTool], names: Sequence[str]) -> OfferedTool | None:
    return next((tools[name] for name in names if name in tools), None)


def _first_field(tool: OfferedTool, candidates: Sequence[str], fallback: str) -> str:
    return next((name for name in candidates if name in tool.properties), fallback)


def _placeholder(schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(schema, Mapping) and "default" in schema:
        return schema["default"]
    if isinstance(schema, Mapping) and isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    return {"boolean": False, "integer": 0, "number": 0, "array": [], "object": {}}.get(
        str(kind), "scripted step"
    )


def _complete(tool: OfferedTool, arguments: dict[str, Any]) -> dict[str, Any]:
    """Fill required arguments the script does not set (opencode's bash wants ``description``)."""
    for name in tool.required:
        if name not in arguments:
            arguments[name] = _placeholder(tool.properties.get(name))
    return arguments


def add_file_patch(path: str, content: str) -> str:
    """An apply_patch envelope that (re)creates ``path`` with ``content``."""
    lines = "".join(f"+{line}\n" for line in content.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"


def _shell(command: str, tools: Mapping[str, OfferedTool], call_id: str) -> RenderedCall:
    tool = _pick(tools, SHELL_TOOLS)
    if tool is None:
        raise RenderError(f"no shell tool offered (looked for {', '.join(SHELL_TOOLS)})")
    if tool.kind == "local_shell":
        action = {"type": "exec", "command": ["bash", "-lc", command]}
        return RenderedCall(call_id, tool.name, "local_shell", arguments=action)
    if tool.kind == "custom":
        return RenderedCall(call_id, tool.name, "custom", input=command)
    key = "cmd" if "cmd" in tool.properties and "command" not in tool.properties else "command"
    is_argv = isinstance(tool.properties.get(key), Mapping) and (
        tool.properties[key].get("type") == "array"
    )
    value: Any = ["bash", "-lc", command] if is_argv else command
    return RenderedCall(call_id, tool.name, "function", arguments=_complete(tool, {key: value}))


def _write(action: Write, tools: Mapping[str, OfferedTool], call_id: str) -> RenderedCall:
    tool = _pick(tools, WRITE_TOOLS)
    if tool is None:
        heredoc = f"cat > {shlex.quote(action.path)} <<'SCRIPTED_EOF'\n{action.content}"
        if not action.content.endswith("\n"):
            heredoc += "\n"
        return _shell(heredoc + "SCRIPTED_EOF", tools, call_id)
    if tool.name == "apply_patch":
        patch = add_file_patch(action.path, action.content)
        if tool.kind == "custom":
            return RenderedCall(call_id, tool.name, "custom", input=patch)
        key = _first_field(tool, PATCH_FIELDS, "input")
        return RenderedCall(call_id, tool.name, "function", arguments=_complete(tool, {key: patch}))
    arguments: dict[str, Any] = {
        _first_field(tool, PATH_FIELDS, "path"): action.path,
        _first_field(tool, CONTENT_FIELDS, "content"): action.content,
    }
    if tool.name == "str_replace_editor":
        arguments["command"] = "create"
    return RenderedCall(call_id, tool.name, "function", arguments=_complete(tool, arguments))


def _explicit(action: Tool, tools: Mapping[str, OfferedTool], call_id: str) -> RenderedCall:
    offered = tools.get(action.name)
    if isinstance(action.arguments, str):
        kind: ToolKind = offered.kind if offered is not None else "custom"
        if kind == "custom":
            return RenderedCall(call_id, action.name, "custom", input=action.arguments)
        return RenderedCall(call_id, action.name, kind, arguments={"input": action.arguments})
    kind = offered.kind if offered is not None and offered.kind != "custom" else "function"
    return RenderedCall(call_id, action.name, kind, arguments=dict(action.arguments))


def _render_action(action: Action, tools: Mapping[str, OfferedTool], call_id: str) -> RenderedCall:
    if isinstance(action, Shell):
        return _shell(action.command, tools, call_id)
    if isinstance(action, Write):
        return _write(action, tools, call_id)
    return _explicit(action, tools, call_id)


def render_step(index: int, step: Step, offered: Sequence[OfferedTool]) -> Turn:
    """Turn script step ``index`` into calls of the tools ``offered`` by the request."""
    tools = {tool.name: tool for tool in offered}
    calls = tuple(
        _render_action(action, tools, f"s{index}_{position}")
        for position, action in enumerate(step.actions)
    )
    return Turn(step.text, calls, index, step.thinking)


def render_text_step(index: int, step: Step) -> Turn:
    """Script step ``index`` in mini-swe-agent's text mode: its text, then one fenced ``bash``
    block per action (more than one is the format error the harness runs nothing for)."""
    blocks = [f"```bash\n{_text_command(action)}\n```" for action in step.actions]
    text = "\n\n".join(part for part in (step.text, *blocks) if part)
    return Turn(text, (), index, step.thinking)


def _text_command(action: Action) -> str:
    if isinstance(action, Shell):
        return action.command
    if isinstance(action, Write):
        ending = "" if action.content.endswith("\n") else "\n"
        quoted = shlex.quote(action.path)
        return f"cat > {quoted} <<'SCRIPTED_EOF'\n{action.content}{ending}SCRIPTED_EOF"
    raise RenderError(f"text mode runs shell commands, not the tool {action.name!r}")
