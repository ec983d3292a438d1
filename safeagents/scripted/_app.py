"""The scripted model: a Starlette app that replays a script and records every request."""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from safeagents.scripted._chat import CHAT
from safeagents.scripted._dialect import Dialect
from safeagents.scripted._messages import MESSAGES, count_tokens
from safeagents.scripted._render import RenderError, Turn, render_step, render_text_step
from safeagents.scripted._responses import RESPONSES
from safeagents.scripted._script import Script, ScriptError

__all__ = ["RecordedRequest", "ScriptedModel", "create_app"]

CONTEXT_LENGTH = 131072
ENDPOINTS: tuple[tuple[str, Dialect], ...] = (
    ("/chat/completions", CHAT),
    ("/responses", RESPONSES),
    ("/messages", MESSAGES),
)
DIALECTS = {dialect.name: dialect for _, dialect in ENDPOINTS}


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One HTTP request the scripted model received, and what it answered."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    status: int
    dialect: str | None = None
    stream: bool = False
    tool_names: tuple[str, ...] = ()
    tool_results: int = 0
    reply: dict[str, Any] | None = field(default=None)

    @property
    def has_tools(self) -> bool:
        return bool(self.tool_names)

    def tool_outputs(self) -> list[str]:
        """The text of every tool result in the request's conversation, in order."""
        if self.dialect is None or not isinstance(self.body, Mapping):
            return []
        return DIALECTS[self.dialect].tool_outputs(self.body)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": self.headers,
            "body": self.body,
            "status": self.status,
            "dialect": self.dialect,
            "stream": self.stream,
            "tool_names": list(self.tool_names),
            "tool_results": self.tool_results,
            "reply": self.reply,
        }


class ScriptedModel:
    """Answers model requests from a :class:`Script`; thread-safe request log.

    ``event_delay`` (seconds) is slept between streamed events, to exercise streaming
    behaviour of whatever sits between the harness and this model; ``reply_delay`` before
    every model answer, streamed or not, so that requests stay in flight through whatever
    sits in between (a slow model).
    """

    def __init__(
        self,
        script: Script,
        model_names: tuple[str, ...] = ("scripted",),
        event_delay: float = 0.0,
        reply_delay: float = 0.0,
    ) -> None:
        self._script = script
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self.model_names = model_names
        self.event_delay = event_delay
        self.reply_delay = reply_delay

    @property
    def script(self) -> Script:
        with self._lock:
            return self._script

    def set_script(self, script: Script) -> None:
        with self._lock:
            self._script = script

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def model_requests(self, dialect: str | None = None) -> list[RecordedRequest]:
        """Requests to a model endpoint (chat, responses or messages), optionally one dialect."""
        return [
            request
            for request in self.requests
            if request.dialect is not None and dialect in (None, request.dialect)
        ]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def answer(self, dialect: Dialect, body: Mapping[str, Any]) -> Turn:
        """The turn answering ``body``: a side reply without tools (a text-mode step, if the
        script is in text mode), else the scripted step."""
        offered = dialect.offered_tools(body)
        script = self.script
        if not offered and script.text_mode:
            messages = body.get("messages")
            replies = sum(
                1
                for message in (messages if isinstance(messages, list) else ())
                if isinstance(message, Mapping) and message.get("role") == "assistant"
            )
            return render_text_step(*script.text_step_at(replies))
        if not offered or body.get("tool_choice") == "none":
            return Turn(script.side_text)
        index, step = script.step_at(dialect.tool_results(body))
        return render_step(index, step, offered)


def _error(dialect: Dialect | None, status: int, message: str) -> JSONResponse:
    if dialect is MESSAGES:
        error = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        return JSONResponse(error, status)
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status)


def _model_entry(name: str) -> dict[str, Any]:
    return {
        "id": name,
        "object": "model",
        "created": 0,
        "owned_by": "safeagents-scripted",
        "context_length": CONTEXT_LENGTH,
        "max_model_len": CONTEXT_LENGTH,
    }


class _Reply(JSONResponse):
    """A scripted answer; a lone surrogate in it (``\\ud800`` in a script) is sent as that
    escape, since UTF-8 cannot hold it."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, separators=(",", ":")).encode()


async def _paced(events: Iterator[str], delay: float) -> AsyncIterator[str]:
    for event in events:
        yield event
        if delay:
            await asyncio.sleep(delay)


def _endpoint(path: str) -> Dialect | None:
    return next((dialect for suffix, dialect in ENDPOINTS if path.endswith(suffix)), None)


def create_app(model: ScriptedModel) -> Starlette:
    """A Starlette app serving ``model`` under any path prefix (``/v1``, ``/s/ID/v1``, ...)."""

    async def control_requests(request: Request) -> Response:
        if request.method == "DELETE":
            model.clear()
            return JSONResponse({"cleared": True})
        return JSONResponse([recorded.to_json() for recorded in model.requests])

    async def control_script(request: Request) -> Response:
        try:
            model.set_script(Script.from_data(json.loads(await request.body())))
        except (ValueError, ScriptError) as exc:
            return _error(None, 400, str(exc))
        return JSONResponse({"steps": len(model.script.steps)})

    async def dispatch(request: Request) -> Response:
        raw = await request.body()
        if request.headers.get("content-encoding", "").lower() == "gzip":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8", "replace")
        try:
            body: Any = json.loads(text) if text.strip() else None
        except ValueError:
            body = text
        base = {
            "method": request.method,
            "path": request.url.path,
            "query": request.url.query,
            "headers": {key.lower(): value for key, value in request.headers.items()},
            "body": body,
        }
        if model.reply_delay and request.method == "POST" and _endpoint(request.url.path):
            await asyncio.sleep(model.reply_delay)
        response, extra = _route(model, request.method, request.url.path, body)
        model.record(RecordedRequest(**base, status=response.status_code, **extra))
        return response

    routes = [
        Route("/_scripted/requests", control_requests, methods=["GET", "DELETE"]),
        Route("/_scripted/script", control_script, methods=["PUT", "POST"]),
        Route("/{path:path}", dispatch, methods=["GET", "POST", "PUT", "DELETE", "HEAD"]),
    ]
    return Starlette(routes=routes)


def _route(
    model: ScriptedModel, method: str, path: str, body: Any
) -> tuple[Response, dict[str, Any]]:
    path = path.rstrip("/")
    if path.startswith("/api/"):  # Ollama / LM Studio native APIs: absent, like on vLLM
        return JSONResponse({"error": {"message": f"no such endpoint: {method} {path}"}}, 404), {}
    if method == "GET" and path.endswith("/models"):
        entries = [_model_entry(name) for name in model.model_names]
        return JSONResponse({"object": "list", "data": entries}), {}
    if method == "GET" and "/models/" in path:
        return JSONResponse(_model_entry(path.split("/models/", 1)[1])), {}
    dialect = _endpoint(path) if method == "POST" else None
    if method == "POST" and path.endswith("/messages/count_tokens"):
        return JSONResponse(count_tokens(body if isinstance(body, Mapping) else {})), {}
    if dialect is None:
        return JSONResponse({"error": {"message": f"no such endpoint: {method} {path}"}}, 404), {}
    if not isinstance(body, Mapping):
        return _error(dialect, 400, "the request body must be a JSON object"), {}
    stream = body.get("stream") is True
    extra: dict[str, Any] = {
        "dialect": dialect.name,
        "stream": stream,
        "tool_names": tuple(tool.name for tool in dialect.offered_tools(body)),
        "tool_results": dialect.tool_results(body),
    }
    try:
        turn = model.answer(dialect, body)
    except RenderError as exc:
        return _error(dialect, 400, f"scripted model cannot render this step: {exc}"), extra
    extra["reply"] = turn.summary()
    if stream:
        events = _paced(dialect.reply_events(turn, body), model.event_delay)
        headers = {"cache-control": "no-cache", "x-accel-buffering": "no"}
        return StreamingResponse(events, media_type="text/event-stream", headers=headers), extra
    return _Reply(dialect.reply_json(turn, body)), extra
