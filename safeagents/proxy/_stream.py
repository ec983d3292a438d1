"""Forwarding a model request: non-stream, and streamed with tool calls held until checked."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator
from typing import Any

import anyio
from starlette.responses import JSONResponse, Response

from safeagents.exchange import (
    Attempt,
    Decision,
    Exchange,
    ExchangeFailed,
    HTTPError,
    Services,
    UpstreamError,
    UpstreamStatus,
    UpstreamTimeout,
)
from safeagents.exchange import Response as UpstreamResponse
from safeagents.protocols import StreamAssembler, StreamError
from safeagents.proxy._replies import (
    parse_upstream,
    render,
    response_headers,
    upstream_failure,
    upstream_refused,
)
from safeagents.proxy._streaming import BodyStream, LastChunk

__all__ = ["complete_exchange", "stream_exchange"]

logger = logging.getLogger("safeagents.proxy")
ABORTED = "the client disconnected before the answer was complete"


def _delivered_for_client(services: Services, ex: Exchange, decision: Decision) -> dict[str, Any]:
    if services.config.capture_tokens:
        return ex.dialect.strip_token_fields(decision.delivered, ex.info)
    return decision.delivered


async def complete_exchange(services: Services, ex: Exchange) -> Response:
    """Non-stream: one upstream answer, checked, re-asked if needed, returned whole."""
    first = Attempt(kind=ex.plan.kind, request=ex.upstream_body)
    try:
        upstream = await services.upstream.open(
            "POST", ex.upstream_url, ex.upstream_headers, ex.upstream_payload
        )
        content = await services.upstream.read(upstream)
        parsed = parse_upstream(upstream.status_code, content, upstream.headers)
    except UpstreamStatus as refused:
        return await upstream_refused(services, ex, [first], refused)
    except UpstreamError as error:
        return await upstream_failure(services, ex, [first], error)
    first.finish(parsed)
    return await _conclude(services, ex, first, content, upstream)


async def _conclude(
    services: Services, ex: Exchange, first: Attempt, content: bytes, upstream: UpstreamResponse
) -> Response:
    try:
        decision = await services.enforcer.decide(ex, first)
    except ExchangeFailed as failed:
        return await upstream_failure(services, ex, failed.attempts, failed.error)
    await services.recorder.record(ex, decision)
    if ex.stream:
        return render(ex, _delivered_for_client(services, ex, decision))
    if decision.unchanged and not services.config.capture_tokens:
        headers = response_headers(upstream.headers)
        return Response(content, status_code=upstream.status_code, headers=headers)
    return JSONResponse(_delivered_for_client(services, ex, decision))


async def stream_exchange(services: Services, ex: Exchange) -> Response:
    """Stream: text reaches the harness at once; calls are held, checked, then emitted."""
    first = Attempt(kind=ex.plan.kind, request=ex.upstream_body)
    try:
        upstream = await services.upstream.open(
            "POST", ex.upstream_url, ex.upstream_headers, ex.upstream_payload
        )
    except UpstreamError as error:
        return await upstream_failure(services, ex, [first], error)
    is_sse = "text/event-stream" in upstream.headers.get("content-type", "")
    if upstream.status_code >= 400 or not is_sse:
        try:
            content = await services.upstream.read(upstream)
            parsed = parse_upstream(upstream.status_code, content, upstream.headers)
        except UpstreamStatus as refused:
            return await upstream_refused(services, ex, [first], refused)
        except UpstreamError as error:
            return await upstream_failure(services, ex, [first], error)
        first.finish(parsed)  # the upstream answered JSON to a stream request
        return await _conclude(services, ex, first, content, upstream)
    return BodyStream(
        _events(services, ex, first, upstream),
        headers=response_headers(upstream.headers),
        media_type="text/event-stream",
        on_close=upstream.aclose,
    )


async def _events(
    services: Services, ex: Exchange, first: Attempt, upstream: UpstreamResponse
) -> AsyncGenerator[bytes, None]:
    """The client's stream. In monitor mode (no token capture) it is the upstream's bytes,
    one chunk behind so that the end of the stream waits for the turn to be recorded."""
    assembler = ex.dialect.assembler(ex.info)
    raw = services.config.mode == "monitor" and not services.config.capture_tokens
    held, forwarded, settled = b"", False, False
    try:
        try:
            async for chunk in upstream.aiter_bytes():
                if raw:
                    if held:
                        yield held
                    held = chunk
                    with contextlib.suppress(StreamError):  # finish() reports it
                        assembler.feed(chunk)
                    continue
                out = assembler.feed(chunk)
                if out:
                    forwarded = True
                    yield out
            response = assembler.finish()
        except (StreamError, HTTPError) as problem:
            error = _stream_failure(problem)
            settled = True
            with anyio.CancelScope(shield=True):
                services.metrics.inc("safeagents_upstream_errors_total", kind=error.kind)
                await services.recorder.record_failure(ex, [first], "error", error.message)
            yield LastChunk(
                held if raw else assembler.fail(error.status, error.message, kind=error.kind)
            )
            return
        finally:
            with anyio.CancelScope(shield=True):
                await upstream.aclose()
        first.finish(response)
        try:
            decision = await services.enforcer.decide(ex, first, text_forwarded=forwarded)
        except ExchangeFailed as failed:
            settled = True
            with anyio.CancelScope(shield=True):
                services.metrics.inc("safeagents_upstream_errors_total", kind=failed.error.kind)
                await services.recorder.record_failure(
                    ex, failed.attempts, "error", failed.error.message
                )
            status, message, kind = failed.error.status, failed.error.message, failed.error.kind
            yield LastChunk(assembler.fail(status, message, kind=kind))
            return
        except Exception as bug:
            settled = True
            logger.exception("enforcement failed on a streamed answer")
            with anyio.CancelScope(shield=True):
                await services.recorder.record_failure(ex, [first], "error", f"internal: {bug!r}")
            yield LastChunk(
                assembler.fail(500, f"safeagents internal error: {bug!r}", kind="internal")
            )
            return
        with anyio.CancelScope(shield=True):
            await services.recorder.record(ex, decision)
        settled = True
        yield LastChunk(held if raw else _tail(services, ex, assembler, decision))
    finally:
        if not settled:
            with anyio.CancelScope(shield=True):
                await services.recorder.record_failure(ex, [first], "aborted", ABORTED)


def _tail(
    services: Services, ex: Exchange, assembler: StreamAssembler, decision: Decision
) -> bytes:
    """The rest of the client's stream: the upstream's own held events when the answer passes
    unchanged (and the upstream was not asked for token fields), else rendered."""
    if decision.unchanged and not services.config.capture_tokens:
        held = assembler.held_events()
        if held is not None:
            return held
    return assembler.tail(_delivered_for_client(services, ex, decision))


def _stream_failure(problem: Exception) -> UpstreamError:
    if isinstance(problem, StreamError):
        return UpstreamError(502, "upstream_malformed", f"malformed upstream stream: {problem}")
    if isinstance(problem, UpstreamTimeout):
        return UpstreamError(504, "upstream_timeout", f"upstream timed out mid-stream: {problem!r}")
    return UpstreamError(502, "upstream_unreachable", f"upstream stream broke: {problem!r}")
