"""A minimal agent loop for machines without a real harness: pi's tools over Chat Completions.

It plays the harness role exactly as a real one does on the wire: it sends the conversation
with pi's tool schema, executes the tool calls it gets back inside the workspace, appends
their results, and stops at the first answer without tool calls.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

__all__ = ["PI_TOOLS", "AgentRun", "agent_env", "execute", "run_builtin_agent"]

_STRING: dict[str, Any] = {"type": "string"}
_INTEGER: dict[str, Any] = {"type": "integer"}


def _function(name: str, description: str, properties: dict[str, Any], *required: str) -> Any:
    parameters = {"type": "object", "properties": properties, "required": list(required)}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


_EDIT = {
    "type": "object",
    "properties": {"oldText": _STRING, "newText": _STRING},
    "required": ["oldText", "newText"],
}
PI_TOOLS: list[dict[str, Any]] = [
    _function(
        "read", "Read a file.", {"path": _STRING, "offset": _INTEGER, "limit": _INTEGER}, "path"
    ),
    _function("bash", "Run a bash command.", {"command": _STRING, "timeout": _INTEGER}, "command"),
    _function(
        "edit",
        "Replace exact text in a file.",
        {"path": _STRING, "edits": {"type": "array", "items": _EDIT}},
        "path",
        "edits",
    ),
    _function("write", "Write a file.", {"path": _STRING, "content": _STRING}, "path", "content"),
]
"""The tools pi 0.73 offers (name, arguments), so the proxy treats this loop as pi."""

SYSTEM = (
    "You are a coding agent working in a small Python project. Use the tools to inspect and "
    "change files and to run commands; answer without tool calls when you are done."
)
MAX_OUTPUT = 20_000


@dataclass(slots=True)
class AgentRun:
    """How the loop ended: ``returncode`` 0 on a final answer, 1 on an error or turn limit."""

    returncode: int
    turns: int
    final_text: str | None = None
    error: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)


class ToolFailure(Exception):
    """A tool call that cannot be carried out; its message becomes the tool result."""


def _inside(workspace: Path, path: object) -> Path:
    if not isinstance(path, str) or not path.strip():
        raise ToolFailure("a non-empty 'path' is required")
    target = (workspace / path).resolve()
    if target != workspace and workspace not in target.parents:
        raise ToolFailure(f"{path} is outside the workspace")
    return target


def _bash(workspace: Path, arguments: Mapping[str, Any], env: Mapping[str, str]) -> str:
    command = arguments.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ToolFailure("a non-empty 'command' is required")
    timeout = arguments.get("timeout")
    shell = shutil.which("bash") or "/bin/sh"
    try:
        done = subprocess.run(
            [shell, "-c", command],
            cwd=workspace,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else 60.0,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ToolFailure(f"command timed out: {command}") from None
    output = done.stdout[-MAX_OUTPUT:] or "(no output)"
    return (
        output
        if done.returncode == 0
        else f"{output}\n\nCommand exited with code {done.returncode}"
    )


def _read(workspace: Path, arguments: Mapping[str, Any]) -> str:
    target = _inside(workspace, arguments.get("path"))
    try:
        return target.read_text(encoding="utf-8", errors="replace")[:MAX_OUTPUT]
    except OSError as problem:
        raise ToolFailure(f"cannot read {arguments.get('path')}: {problem.strerror}") from None


def _write(workspace: Path, arguments: Mapping[str, Any]) -> str:
    target = _inside(workspace, arguments.get("path"))
    content = arguments.get("content")
    if not isinstance(content, str):
        raise ToolFailure("'content' must be a string")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    return f"Successfully wrote {len(content.encode())} bytes to {arguments['path']}"


def _edit(workspace: Path, arguments: Mapping[str, Any]) -> str:
    target = _inside(workspace, arguments.get("path"))
    edits = arguments.get("edits")
    if not isinstance(edits, list) or not edits:
        raise ToolFailure("'edits' must be a non-empty list of {oldText, newText}")
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as problem:
        raise ToolFailure(f"cannot read {arguments.get('path')}: {problem.strerror}") from None
    for edit in edits:
        old, new = (edit.get("oldText"), edit.get("newText")) if isinstance(edit, dict) else (0, 0)
        if not isinstance(old, str) or not isinstance(new, str) or old not in text:
            raise ToolFailure(f"could not find the text to replace in {arguments.get('path')}")
        text = text.replace(old, new, 1)
    target.write_text(text, encoding="utf-8")
    return f"Successfully replaced text in {arguments['path']}"


def execute(workspace: Path, name: str, raw_arguments: object, env: Mapping[str, str]) -> str:
    """Run one tool call in ``workspace``; failures come back as text, like a harness does."""
    try:
        arguments = json.loads(raw_arguments) if isinstance(raw_arguments, str) else raw_arguments
        if not isinstance(arguments, dict):
            raise ToolFailure("tool arguments must be a JSON object")
        if name == "bash":
            return _bash(workspace, arguments, env)
        if name == "read":
            return _read(workspace, arguments)
        if name == "write":
            return _write(workspace, arguments)
        if name == "edit":
            return _edit(workspace, arguments)
        raise ToolFailure(f"unknown tool {name!r}")
    except ToolFailure as failure:
        return f"Error: {failure}"
    except ValueError as problem:
        return f"Error: the arguments are not valid JSON: {problem}"


def agent_env() -> dict[str, str]:
    """The environment of the loop's shell: this Python's bin directory first on ``PATH``."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("PYTHONPATH", None)
    return env


def run_builtin_agent(
    base_url: str,
    model: str,
    workspace: Path,
    prompt: str,
    *,
    max_turns: int = 24,
    timeout: float = 60.0,
) -> AgentRun:
    """Drive the model at ``base_url`` (an OpenAI-style ``.../v1``) until it stops calling tools."""
    workspace = workspace.resolve()
    env = agent_env()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": prompt},
    ]
    url = base_url.rstrip("/") + "/chat/completions"
    headers = {"authorization": "Bearer sk-safeagents-demo"}
    with httpx.Client(timeout=timeout) as client:
        for turn in range(1, max_turns + 1):
            body = {"model": model, "messages": messages, "tools": PI_TOOLS, "stream": False}
            try:
                response = client.post(url, json=body, headers=headers)
            except httpx.HTTPError as problem:
                return AgentRun(1, turn, error=f"request failed: {problem!r}", messages=messages)
            if response.status_code != 200:
                error = f"HTTP {response.status_code}: {response.text[:500]}"
                return AgentRun(1, turn, error=error, messages=messages)
            message = dict(response.json()["choices"][0]["message"])
            messages.append(message)
            calls = message.get("tool_calls") or []
            if not calls:
                return AgentRun(0, turn, final_text=message.get("content"), messages=messages)
            for call in calls:
                function = call.get("function") or {}
                name = str(function.get("name") or "")
                output = execute(workspace, name, function.get("arguments") or "{}", env)
                messages.append({"role": "tool", "tool_call_id": call.get("id"), "content": output})
    return AgentRun(
        1, max_turns, error=f"no final answer after {max_turns} turns", messages=messages
    )
