"""Shared helpers for the proxy tests (imported, not collected): bodies, calls, harness steps."""

from __future__ import annotations

import contextlib
import copy
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from safeagents._actions import ToolCall
from safeagents.protocols import CHAT, MESSAGES, RESPONSES, Dialect

if TYPE_CHECKING:
    from safeagents.proxy import ProxyServer

StartProxy = Callable[..., "ProxyServer"]
"""The ``start_proxy`` fixture:
``start(upstream_url, *, firewall=None, fresh=False, **options)``."""

DIALECTS: dict[str, Dialect] = {"chat": CHAT, "responses": RESPONSES, "messages": MESSAGES}
PATHS = {"chat": "/chat/completions", "responses": "/responses", "messages": "/messages"}
HARNESS = {"chat": "pi", "responses": "codex", "messages": "claude-code"}
BLOCKED = "rm tests/test_a.py"
http = httpx.Client(timeout=30)
"""One pooled client for all tests (creating a client per request costs ~30 ms)."""
RULE = "test-file-deletion"

_STRING = {"type": "string"}
_CHAT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {"command": _STRING, "path": _STRING}},
        },
    }
    for name in ("bash", "read", "edit", "write", "grep", "find", "ls")
]
_RESPONSES_TOOLS = [
    {
        "type": "function",
        "name": "shell_command",
        "parameters": {"type": "object", "properties": {"command": _STRING}},
    },
    {"type": "custom", "name": "apply_patch"},
    {"type": "function", "name": "update_plan", "parameters": {"type": "object"}},
]
_MESSAGES_TOOLS = [
    {
        "name": name,
        "input_schema": {
            "type": "object",
            "properties": {"command": _STRING, "file_path": _STRING},
        },
    }
    for name in ("Bash", "Read", "Write", "Edit", "Glob", "Grep")
]


def first_body(dialect: str, task: str = "fix the bug", *, stream: bool = False) -> dict[str, Any]:
    """A harness's first request of a session, offering its usual tools."""
    if dialect == "chat":
        messages = [{"role": "system", "content": "You are pi."}, {"role": "user", "content": task}]
        return {"model": "m", "messages": messages, "tools": _CHAT_TOOLS, "stream": stream}
    if dialect == "responses":
        user = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": task}],
        }
        return {
            "model": "m",
            "instructions": "You are codex.",
            "input": [user],
            "tools": _RESPONSES_TOOLS,
            "stream": stream,
        }
    return {
        "model": "m",
        "system": "You are Claude Code.",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": task}],
        "tools": _MESSAGES_TOOLS,
        "stream": stream,
    }


def side_body(dialect: str, text: str = "Generate a title") -> dict[str, Any]:
    body = first_body(dialect, text)
    body.pop("tools")
    return body


def decode(dialect: str, response: httpx.Response) -> dict[str, Any]:
    """The answer in non-stream shape, whether it came as JSON or as SSE."""
    if "text/event-stream" in response.headers.get("content-type", ""):
        assembler = DIALECTS[dialect].assembler()
        assembler.feed(response.content)
        return assembler.finish()
    value = response.json()
    assert isinstance(value, dict)
    return value


def calls(dialect: str, response: Mapping[str, Any]) -> list[ToolCall]:
    return DIALECTS[dialect].tool_calls(response)


def commands(dialect: str, response: Mapping[str, Any]) -> list[str]:
    return [str(call.argument("command")) for call in calls(dialect, response)]


def finish_reason(dialect: str, response: Mapping[str, Any]) -> str:
    if dialect == "chat":
        return str(response["choices"][0]["finish_reason"])
    if dialect == "messages":
        return str(response["stop_reason"])
    return "tool_calls" if calls(dialect, response) else "stop"


def text(dialect: str, response: Mapping[str, Any]) -> str:
    if dialect == "chat":
        return str(response["choices"][0]["message"].get("content") or "")
    if dialect == "messages":
        return "".join(b.get("text", "") for b in response["content"] if b["type"] == "text")
    return "".join(
        part.get("text", "")
        for item in response["output"]
        if item.get("type") == "message"
        for part in item["content"]
    )


def follow_up(
    dialect: str, body: Mapping[str, Any], response: Mapping[str, Any], outputs: list[str]
) -> dict[str, Any]:
    """The harness's next request: its answer appended, then one result per call."""
    body = copy.deepcopy(dict(body))
    found = calls(dialect, response)
    assert len(outputs) == len(found), (outputs, found)
    if dialect == "chat":
        message = response["choices"][0]["message"]
        assistant = {k: v for k, v in message.items() if k in ("role", "content", "tool_calls")}
        results = [
            {"role": "tool", "tool_call_id": c.id, "content": o}
            for c, o in zip(found, outputs, strict=True)
        ]
        body["messages"] = [*body["messages"], assistant, *results]
    elif dialect == "messages":
        blocks = [
            {"type": "tool_result", "tool_use_id": c.id, "content": o}
            for c, o in zip(found, outputs, strict=True)
        ]
        assistant = {"role": "assistant", "content": response["content"]}
        body["messages"] = [*body["messages"], assistant, {"role": "user", "content": blocks}]
    else:
        kinds = {item.get("call_id"): item["type"] for item in response["output"]}
        results = [
            {
                "type": "custom_tool_call_output"
                if kinds.get(c.id) == "custom_tool_call"
                else "function_call_output",
                "call_id": c.id,
                "output": o,
            }
            for c, o in zip(found, outputs, strict=True)
        ]
        body["input"] = [*body["input"], *copy.deepcopy(response["output"]), *results]
    return body


def tool_results(dialect: str, body: Mapping[str, Any]) -> list[str]:
    """The text of every tool result in a request body, in order."""
    if dialect == "chat":
        return [m["content"] for m in body["messages"] if m.get("role") == "tool"]
    if dialect == "messages":
        return [
            b["content"]
            for m in body["messages"]
            if isinstance(m.get("content"), list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
    return [i["output"] for i in body["input"] if str(i.get("type", "")).endswith("_output")]


def conversation_calls(dialect: str, body: Mapping[str, Any]) -> list[str]:
    """The ``command`` argument of every assistant tool call in a request body, in order."""
    found: list[str] = []
    if dialect == "chat":
        for m in body["messages"]:
            for c in m.get("tool_calls") or ():
                found.append(json.loads(c["function"]["arguments"]).get("command", ""))
    elif dialect == "messages":
        for m in body["messages"]:
            if m["role"] == "assistant" and isinstance(m["content"], list):
                found += [
                    b["input"].get("command", "") for b in m["content"] if b["type"] == "tool_use"
                ]
    else:
        for i in body["input"]:
            if i.get("type") == "function_call":
                found.append(json.loads(i["arguments"]).get("command", ""))
    return found


def chat_tool_answer(command: str) -> dict[str, Any]:
    """A non-streamed chat completion whose one ``bash`` tool call runs ``command``."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": "c1",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }


def script(*steps: Any) -> Any:
    from safeagents.scripted import Script

    return Script.from_data(list(steps))


def session_json(proxy_url: str, session_id: str, **headers: str) -> dict[str, Any]:
    response = http.get(f"{proxy_url}/safeagents/v1/sessions/{session_id}", headers=headers)
    assert response.status_code == 200, response.text
    value = response.json()
    assert isinstance(value, dict)
    return value


class FakeUpstream:
    """A loopback HTTP server whose every answer comes from ``handler`` (set per test)."""

    def __init__(self) -> None:
        import socket

        import uvicorn
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route

        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self.handler: Any = None

        async def dispatch(request: Request) -> Response:
            body = await request.body()
            self.requests.append((request.method, request.url.path, dict(request.headers), body))
            response: Response = await self.handler(request)
            return response

        methods = ["GET", "POST", "PUT", "DELETE"]
        app = Starlette(routes=[Route("/{path:path}", dispatch, methods=methods)])
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        config = uvicorn.Config(
            app, log_level="error", lifespan="off", ws="none", timeout_graceful_shutdown=0
        )
        self._server = uvicorn.Server(config)
        self._thread: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeUpstream:
        import threading
        import time

        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        while not self._server.started:
            time.sleep(0.005)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(5)
        self._socket.close()


@contextlib.contextmanager
def serve_process(
    upstream: str, store: str, log: Path, *flags: str, ready_within: float = 30.0
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``safeagents serve`` as a child process; yields it and its base URL once healthy
    (which it must be within ``ready_within`` seconds)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    command = [sys.executable, "-m", "safeagents.cli", "serve", "--upstream", upstream]
    command += ["--port", str(port), "--store", store, "--log-level", "warning", *flags]
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + ready_within
        while True:
            try:
                if http.get(f"{base}/safeagents/v1/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield process, base
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            process.wait(20)


@contextlib.contextmanager
def serve_workers(
    upstream: str, store: str, log: Path, *flags: str, workers: int = 2
) -> Iterator[str]:
    """``safeagents serve --workers N`` as a child process; yields its base URL once healthy."""
    with serve_process(upstream, store, log, "--workers", str(workers), *flags) as (_, base):
        yield base
