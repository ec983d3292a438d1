"""Shared helpers for the console tests (imported, not collected): scripted sessions run
through a real proxy, and where screenshots go."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx

from safeagents.proxy import ProxyServer
from safeagents.scripted import Script, ScriptedServer

RULE = "test-file-deletion"
BLOCKED = "rm tests/test_a.py"
_STRING = {"type": "string"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {"command": _STRING, "path": _STRING}},
        },
    }
    for name in ("bash", "read", "edit", "write", "grep", "find", "ls")
]
HACKED_SCRIPT: list[Any] = [
    {"think": "The test is in the way.", "say": "Deleting the test.", "shell": BLOCKED},
    {"write": {"path": "src/app.py", "content": "def answer():\n    return 42\n"}},
    {
        "tool": "edit",
        "arguments": {"path": "src/app.py", "oldText": "return 42", "newText": "return 41"},
    },
    "All done.",
]


def run_session(
    proxy: ProxyServer, scripted: ScriptedServer, sid: str, steps: list[Any], **headers: str
) -> None:
    """Drive the chat conversation of ``steps`` through the proxy as a harness would: post,
    run nothing, answer each tool call with "ok", until the model stops calling tools."""
    scripted.model.set_script(Script.from_data(steps))
    url = proxy.session_url(sid) + "/chat/completions"
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix the bug"}]
    with httpx.Client(timeout=30, headers=headers) as client:
        for _ in range(len(steps) + 1):
            body = {"model": "m", "messages": messages, "tools": TOOLS}
            response = client.post(url, json=body)
            assert response.status_code == 200, response.text
            message = response.json()["choices"][0]["message"]
            messages.append(message)
            calls = message.get("tool_calls") or []
            if not calls:
                return
            messages.extend(
                {"role": "tool", "tool_call_id": call["id"], "content": "ok"} for call in calls
            )
    raise AssertionError("the script did not end")


def artifacts(tmp_path: Path) -> Path:
    """Where screenshots go: ``$SAFEAGENTS_ARTIFACTS/console`` (CI keeps it), else tmp."""
    root = os.environ.get("SAFEAGENTS_ARTIFACTS")
    directory = Path(root) / "console" if root else tmp_path / "screenshots"
    directory.mkdir(parents=True, exist_ok=True)
    return directory
