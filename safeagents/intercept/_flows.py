"""What happens to one intercepted model request, free of mitmproxy's types.

A request becomes an :class:`~safeagents.exchange.Outcome` (its exchange, first attempt,
and single record); a buffered answer is settled by :func:`settle_buffered`, a streamed one
passes through a :class:`StreamFilter`. Both check, re-ask and record exactly as ``serve``
does; a flow mitmproxy ends with an error is recorded by the addon's ``error`` hook.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from safeagents.exchange import (
    Decision,
    Exchange,
    Outcome,
    ResponseTooLarge,
    Services,
    UpstreamError,
    parse_json_object,
    prepare_exchange,
    upstream_error,
)
from safeagents.intercept._engine import EngineThread
from safeagents.protocols import (
    CHAT,
    MAX_REQUEST_DEPTH,
    MESSAGES,
    Dialect,
    StreamError,
    dialect_for_path,
    loads_json,
    session_prefix,
    unchecked_model_endpoint,
)
from safeagents.store import TurnStatus

__all__ = [
    "Replacement",
    "StreamFilter",
    "TooLarge",
    "abort_reason",
    "intercept_request",
    "model_dialect",
    "parse_body",
    "settle_buffered",
    "too_large",
    "unchecked_dialect",
]

JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"


@dataclass(frozen=True, slots=True)
class Replacement:
    """The answer the harness gets instead of the upstream's."""

    status: int
    body: bytes
    content_type: str


def model_dialect(method: str, path: str) -> Dialect | None:
    """The dialect of a model API request (``POST …/chat/completions`` and the like)."""
    return dialect_for_path(path) if method.upper() == "POST" else None


def unchecked_dialect(method: str, path: str) -> Dialect | None:
    """For a write to a model endpoint safeagents cannot check (legacy completions, Ollama,
    Gemini, batches…), the dialect whose error shape refuses it; ``None`` for other requests."""
    if dialect_for_path(path) is not None or not unchecked_model_endpoint(method, path):
        return None
    return MESSAGES if "messages" in path.lower() else CHAT


def parse_body(dialect: Dialect, raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object the dialect understands; :class:`ValueError` says
    why it is not one."""
    try:
        body = loads_json(raw, MAX_REQUEST_DEPTH, finite=True)
    except ValueError as error:
        raise ValueError(f"request body is not valid JSON: {error}") from None
    if not isinstance(body, dict):
        raise ValueError("request body must be a JSON object")
    try:
        dialect.parse_request(body)
    except (TypeError, ValueError, AttributeError) as error:
        raise ValueError(f"malformed {dialect.name} request: {error}") from None
    return body


async def intercept_request(
    services: Services,
    dialect: Dialect,
    body: dict[str, Any],
    *,
    path: str,
    headers: Mapping[str, str],
    url: str,
) -> Outcome:
    """Identify the session and splice its hidden history in (``ex.upstream_body``)."""
    path_id, _ = session_prefix(path.split("?", 1)[0])
    info = dialect.parse_request(body)
    ex = await prepare_exchange(
        services, dialect, body, info, path_id=path_id, headers=headers, upstream_url=url
    )
    return Outcome(services, ex)


def _encode(value: Mapping[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _error(ex: Exchange, error: UpstreamError) -> Replacement:
    return Replacement(error.status, error_body(ex, error), JSON_TYPE)


def too_large(limit: int) -> UpstreamError:
    """The error of an answer past the response limit: serve's 502 ``upstream_too_large``."""
    return upstream_error(ResponseTooLarge(limit), "read")


class TooLarge:
    """``flow.response.stream`` for an answer whose announced length is past the limit: its
    bytes are dropped as they arrive and the harness gets the error (status and headers were
    set to it before they went out)."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sent = False

    def __call__(self, chunk: bytes) -> list[bytes]:
        if chunk or self.sent:
            return []
        self.sent = True
        return [self.body]


def error_body(ex: Exchange, error: UpstreamError) -> bytes:
    return _encode(ex.dialect.error_body(error.status, error.message, kind=error.kind))


def _parse_answer(ex: Exchange, content: bytes, content_type: str) -> dict[str, Any]:
    if SSE_TYPE in content_type:
        assembler = ex.dialect.assembler(ex.info)
        try:
            assembler.feed(content)
            return assembler.finish()
        except StreamError as problem:
            raise upstream_error(problem, "stream") from None
    return parse_json_object(content)


async def settle_buffered(
    outcome: Outcome, status: int, content: bytes, content_type: str
) -> Replacement | None:
    """Check a whole answer; ``None`` leaves the upstream's bytes as they are."""
    ex = outcome.ex
    limit = outcome.services.config.response_limit
    if len(content) > limit:  # mitmproxy buffered it (no length was announced)
        error = too_large(limit)
        await outcome.upstream_failed(error)
        return None if outcome.services.config.mode == "monitor" else _error(ex, error)
    if status >= 400:  # errors carry no tool calls: the harness sees them unchanged
        await outcome.fail(f"upstream answered {status}")
        return None
    try:
        response = _parse_answer(ex, content, content_type)
    except UpstreamError as error:
        await outcome.fail(error.message)
        return None if outcome.services.config.mode == "monitor" else _error(ex, error)
    outcome.first.finish(response)
    decision = await outcome.settle()
    if isinstance(decision, UpstreamError):
        return _error(ex, decision)
    if decision.unchanged:
        return None
    if ex.stream:
        return Replacement(200, ex.dialect.stream_events(decision.delivered, ex.info), SSE_TYPE)
    return Replacement(200, _encode(decision.delivered), JSON_TYPE)


class StreamFilter:
    """``flow.response.stream`` for a streamed model answer.

    Text goes to the harness as it arrives (unless a text-mode harness may run it); tool calls
    are held until the stream ends, then checked (and re-asked) on the engine's loop while
    mitmproxy waits, and the rest of the stream is emitted for the answer the harness may
    see. In monitor mode the upstream's bytes pass unchanged and the answer is only recorded.
    """

    def __init__(self, engine: EngineThread, outcome: Outcome, wait_limit: float) -> None:
        self.engine = engine
        self.outcome = outcome
        self.wait_limit = wait_limit
        self.raw = engine.config.mode == "monitor"
        self.assembler = outcome.ex.dialect.assembler(outcome.ex.info)
        self.assembler.holds_text = outcome.ex.text_mode is not None
        self.forwarded = False
        self.ended = False
        self.limit = engine.config.response_limit
        self.received = 0

    def __call__(self, chunk: bytes) -> list[bytes]:
        # never an empty chunk: mitmproxy would send it as the end of a chunked body
        out = self._end() if not chunk else self._pass(chunk)  # b"" is the end of the stream
        return [out] if out else []

    def _pass(self, chunk: bytes) -> bytes:
        if self.ended:
            return chunk if self.raw else b""
        self.received += len(chunk)
        if self.received > self.limit:  # what is held would grow without bound
            out = self._fail(too_large(self.limit))
            return chunk if self.raw else out  # monitor mode changes no byte
        if self.raw:
            with contextlib.suppress(StreamError):  # finish() reports it
                self.assembler.feed(chunk)
            return chunk
        try:
            out = self.assembler.feed(chunk)
        except StreamError as problem:
            return self._fail(upstream_error(problem, "stream"))
        self.forwarded = self.forwarded or bool(out)
        return out

    def _end(self) -> bytes:
        if self.ended:
            return b""
        try:
            response = self.assembler.finish()
        except StreamError as problem:
            return self._fail(upstream_error(problem, "stream"))
        self.ended = True
        outcome, forwarded = self.outcome, self.forwarded
        outcome.first.finish(response)
        decision: Decision | UpstreamError
        try:
            decision = self.engine.wait(
                lambda _: outcome.settle(text_forwarded=forwarded), self.wait_limit
            )
        except TimeoutError:
            decision = UpstreamError(504, "upstream_timeout", "safeagents timed out checking")
        if self.raw:
            return b""
        if isinstance(decision, UpstreamError):
            return self.assembler.fail(decision.status, decision.message, kind=decision.kind)
        return self.assembler.tail(decision.delivered)

    def _fail(self, error: UpstreamError) -> bytes:
        """Record the broken stream (without waiting) and end the harness's stream with it."""
        self.ended = True
        outcome = self.outcome
        self.engine.submit(lambda _: outcome.upstream_failed(error))
        if self.raw:
            return b""
        return self.assembler.fail(error.status, error.message, kind=error.kind)


def abort_reason(had_response: bool, message: str) -> tuple[TurnStatus, str]:
    """The turn status and error of a flow mitmproxy ended with an error."""
    if had_response:
        return "aborted", f"the connection broke before the answer was complete: {message}"
    return "error", f"the upstream could not be reached: {message}"
