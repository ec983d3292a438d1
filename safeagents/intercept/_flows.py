"""What happens to one intercepted model request, free of mitmproxy's types.

A request becomes an :class:`Intercepted` (the proxy's :class:`Exchange` plus its first
attempt); a buffered answer is settled by :func:`settle_buffered`, a streamed one passes
through a :class:`StreamFilter`. Both check, re-ask and record exactly as ``serve`` does.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from safeagents.exchange import (
    Attempt,
    Decision,
    Exchange,
    ExchangeFailed,
    Services,
    UpstreamError,
    parse_json_object,
    prepare_exchange,
)
from safeagents.intercept._engine import EngineThread
from safeagents.protocols import Dialect, StreamError, dialect_for_path, session_prefix
from safeagents.store import TurnStatus

__all__ = [
    "Intercepted",
    "Replacement",
    "StreamFilter",
    "abort_reason",
    "intercept_request",
    "model_dialect",
    "parse_body",
    "settle_buffered",
]

logger = logging.getLogger("safeagents.intercept")
JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"


@dataclass(slots=True)
class Intercepted:
    """A model request on its way through mitmproxy, and whether its outcome is recorded."""

    ex: Exchange
    first: Attempt
    settled: bool = False


@dataclass(frozen=True, slots=True)
class Replacement:
    """The answer the harness gets instead of the upstream's."""

    status: int
    body: bytes
    content_type: str


def model_dialect(method: str, path: str) -> Dialect | None:
    """The dialect of a model API request (``POST …/chat/completions`` and the like)."""
    return dialect_for_path(path) if method.upper() == "POST" else None


def parse_body(dialect: Dialect, raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object the dialect understands; :class:`ValueError` says
    why it is not one."""
    try:
        body = json.loads(raw)
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
) -> Intercepted:
    """Identify the session and splice its hidden history in (``ex.upstream_body``)."""
    path_id, _ = session_prefix(path.split("?", 1)[0])
    info = dialect.parse_request(body)
    ex = await prepare_exchange(
        services, dialect, body, info, path_id=path_id, headers=headers, upstream_url=url
    )
    return Intercepted(ex, Attempt(kind=ex.plan.kind, request=ex.upstream_body))


def _encode(value: Mapping[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _error(ex: Exchange, error: UpstreamError) -> Replacement:
    body = ex.dialect.error_body(error.status, error.message, kind=error.kind)
    return Replacement(error.status, _encode(body), JSON_TYPE)


def _parse_answer(ex: Exchange, content: bytes, content_type: str) -> dict[str, Any]:
    if SSE_TYPE in content_type:
        assembler = ex.dialect.assembler(ex.info)
        try:
            assembler.feed(content)
            return assembler.finish()
        except StreamError as problem:
            raise _malformed(problem) from None
    return parse_json_object(content)


def _malformed(problem: StreamError) -> UpstreamError:
    return UpstreamError(502, "upstream_malformed", f"malformed upstream stream: {problem}")


async def _decide(
    services: Services, state: Intercepted, *, text_forwarded: bool
) -> Decision | UpstreamError:
    """Check (and re-ask) then record; a failed re-ask is recorded and returned."""
    ex = state.ex
    state.settled = True
    try:
        decision = await services.enforcer.decide(ex, state.first, text_forwarded=text_forwarded)
    except ExchangeFailed as failed:
        services.metrics.inc("safeagents_upstream_errors_total", kind=failed.error.kind)
        await services.recorder.record_failure(ex, failed.attempts, "error", failed.error.message)
        return failed.error
    except Exception as bug:
        logger.exception("enforcement failed on an intercepted answer")
        await services.recorder.record_failure(ex, [state.first], "error", f"internal: {bug!r}")
        return UpstreamError(500, "internal", f"safeagents internal error: {bug!r}")
    await services.recorder.record(ex, decision)
    return decision


async def settle_buffered(
    services: Services, state: Intercepted, status: int, content: bytes, content_type: str
) -> Replacement | None:
    """Check a whole answer; ``None`` leaves the upstream's bytes as they are."""
    ex = state.ex
    if status >= 400:  # errors carry no tool calls: the harness sees them unchanged
        state.settled = True
        await services.recorder.record_failure(
            ex, [state.first], "error", f"upstream answered {status}"
        )
        return None
    try:
        response = _parse_answer(ex, content, content_type)
    except UpstreamError as error:
        state.settled = True
        await services.recorder.record_failure(ex, [state.first], "error", error.message)
        return None if services.config.mode == "monitor" else _error(ex, error)
    state.first.finish(response)
    outcome = await _decide(services, state, text_forwarded=False)
    if isinstance(outcome, UpstreamError):
        return _error(ex, outcome)
    if outcome.unchanged:
        return None
    if ex.stream:
        return Replacement(200, ex.dialect.stream_events(outcome.delivered, ex.info), SSE_TYPE)
    return Replacement(200, _encode(outcome.delivered), JSON_TYPE)


class StreamFilter:
    """``flow.response.stream`` for a streamed model answer.

    Text goes to the harness as it arrives; tool calls are held until the stream ends,
    then checked (and re-asked) on the engine's loop while mitmproxy waits, and the rest
    of the stream is emitted for the answer the harness may see. In monitor mode the
    upstream's bytes pass unchanged and the answer is only recorded.
    """

    def __init__(self, engine: EngineThread, state: Intercepted, wait_limit: float) -> None:
        self.engine = engine
        self.state = state
        self.wait_limit = wait_limit
        self.raw = engine.config.mode == "monitor"
        self.assembler = state.ex.dialect.assembler(state.ex.info)
        self.forwarded = False
        self.ended = False

    def __call__(self, chunk: bytes) -> list[bytes]:
        # never an empty chunk: mitmproxy would send it as the end of a chunked body
        out = self._end() if not chunk else self._pass(chunk)  # b"" is the end of the stream
        return [out] if out else []

    def _pass(self, chunk: bytes) -> bytes:
        if self.ended:
            return chunk if self.raw else b""
        if self.raw:
            with contextlib.suppress(StreamError):  # finish() reports it
                self.assembler.feed(chunk)
            return chunk
        try:
            out = self.assembler.feed(chunk)
        except StreamError as problem:
            return self._fail(_malformed(problem))
        self.forwarded = self.forwarded or bool(out)
        return out

    def _end(self) -> bytes:
        if self.ended:
            return b""
        try:
            response = self.assembler.finish()
        except StreamError as problem:
            return self._fail(_malformed(problem))
        self.ended = True
        self.state.first.finish(response)
        forwarded = self.forwarded
        try:
            outcome = self.engine.wait(
                lambda services: _decide(services, self.state, text_forwarded=forwarded),
                self.wait_limit,
            )
        except TimeoutError:
            outcome = UpstreamError(504, "upstream_timeout", "safeagents timed out checking")
        if self.raw:
            return b""
        if isinstance(outcome, UpstreamError):
            return self.assembler.fail(outcome.status, outcome.message, kind=outcome.kind)
        return self.assembler.tail(outcome.delivered)

    def _fail(self, error: UpstreamError) -> bytes:
        """Record the broken stream (without waiting) and end the harness's stream with it."""
        self.ended = True
        self.state.settled = True
        ex, first = self.state.ex, self.state.first
        self.engine.submit(
            lambda services: services.recorder.record_failure(ex, [first], "error", error.message)
        )
        if self.raw:
            return b""
        return self.assembler.fail(error.status, error.message, kind=error.kind)


def abort_reason(had_response: bool, message: str) -> tuple[TurnStatus, str]:
    """The turn status and error of a flow mitmproxy ended with an error."""
    if had_response:
        return "aborted", f"the connection broke before the answer was complete: {message}"
    return "error", f"the upstream could not be reached: {message}"
