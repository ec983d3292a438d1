"""Forwarding a model request: non-stream, and streamed with tool calls held until checked."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import Any

import anyio
from starlette.responses import JSONResponse, Response

from safeagents.exchange import (
    Decision,
    Exchange,
    HTTPError,
    Outcome,
    Services,
    UpstreamError,
    UpstreamStatus,
    upstream_error,
)
from safeagents.exchange import TransportResponse as UpstreamResponse
from safeagents.protocols import StreamAssembler, StreamError
from safeagents.proxy._replies import (
    error_reply,
    parse_upstream,
    render,
    response_headers,
    upstream_failure,
    upstream_refused,
)
from safeagents.proxy._streaming import BodyStream, LastChunk

__all__ = ["complete_exchange", "stream_exchange"]


def _delivered_for_client(services: Services, ex: Exchange, decision: Decision) -> dict[str, Any]:
    if services.config.capture_tokens:
        return ex.dialect.strip_token_fields(decision.delivered, ex.info)
    return decision.delivered


async def complete_exchange(outcome: Outcome) -> Response:
    """Non-stream: one upstream answer, checked, re-asked if needed, returned whole."""
    async with outcome:
        ex, services = outcome.ex, outcome.services
        outcome.begin_checks()
        try:
            upstream = await services.upstream.open(
                "POST", ex.upstream_url, ex.upstream_headers, ex.upstream_payload
            )
        except UpstreamError as error:
            return await upstream_failure(outcome, error)
        return await _whole(outcome, upstream)


async def _whole(outcome: Outcome, upstream: UpstreamResponse) -> Response:
    """Read, check and answer a whole upstream answer (JSON, even to a stream request)."""
    services, ex = outcome.services, outcome.ex
    try:
        content = await services.upstream.read(upstream)
        parsed = parse_upstream(upstream.status_code, content, upstream.headers)
    except UpstreamStatus as refused:
        return await upstream_refused(outcome, refused)
    except UpstreamError as error:
        return await upstream_failure(outcome, error)
    outcome.first.finish(ex.answer(parsed, ex.upstream_body))
    decision = await outcome.settle()
    if isinstance(decision, UpstreamError):
        return error_reply(ex, decision)
    if ex.stream:
        return render(ex, _delivered_for_client(services, ex, decision))
    if decision.unchanged and not services.config.capture_tokens and ex.bridge is None:
        headers = response_headers(upstream.headers)
        return Response(content, status_code=upstream.status_code, headers=headers)
    return JSONResponse(_delivered_for_client(services, ex, decision))


async def stream_exchange(outcome: Outcome) -> Response:
    """Stream: text reaches the harness at once; calls are held, checked, then emitted."""
    services, ex = outcome.services, outcome.ex
    outcome.begin_checks()
    try:
        upstream = await services.upstream.open(
            "POST", ex.upstream_url, ex.upstream_headers, ex.upstream_payload
        )
        is_sse = "text/event-stream" in upstream.headers.get("content-type", "")
        if upstream.status_code >= 400 or not is_sse:
            async with outcome:
                return await _whole(outcome, upstream)
    except UpstreamError as error:
        return await upstream_failure(outcome, error)
    except BaseException:
        await outcome.close()
        raise
    stream = BodyStream(
        _events(outcome, upstream),
        headers=response_headers(upstream.headers),
        media_type="text/event-stream",
        on_close=upstream.aclose,
    )
    stream.also_on_close(outcome.close)  # even if the stream never started
    return stream


async def _events(outcome: Outcome, upstream: UpstreamResponse) -> AsyncGenerator[bytes, None]:
    """The client's stream. In monitor mode (no token capture) it is the upstream's bytes,
    one chunk behind so that the end of the stream waits for the turn to be recorded."""
    services, ex = outcome.services, outcome.ex
    if ex.bridge is not None:
        assembler = ex.bridge.assembler(ex.info, ex.upstream_body)
    else:
        assembler = ex.dialect.assembler(ex.info)
    assembler.holds_text = ex.text_mode is not None
    raw = services.config.mode == "monitor" and not services.config.translates
    held, forwarded, sent = b"", False, False
    async with outcome:  # a client gone, or a bug: recorded as it ends
        try:
            async for chunk in services.upstream.body(upstream):
                if raw:
                    if held:
                        sent = True
                        yield held
                    held = chunk
                    with contextlib.suppress(StreamError):  # finish() reports it
                        assembler.feed(chunk)
                    continue
                out = assembler.feed(chunk)
                if out:
                    forwarded = sent = True
                    yield out
            response = assembler.finish()
        except (StreamError, HTTPError) as problem:
            error = upstream_error(problem, "stream")
            if sent or (raw and held):
                outcome.first.delivered = _received(ex, assembler)
            await outcome.upstream_failed(error)
            yield LastChunk(
                held if raw else assembler.fail(error.status, error.message, kind=error.kind)
            )
            return
        except BaseException:  # the client went away mid-stream (or a bug)
            if sent:
                outcome.first.delivered = _received(ex, assembler)
            raise
        finally:
            with anyio.CancelScope(shield=True):
                await upstream.aclose()
        outcome.first.finish(response)
        decision = await outcome.settle(text_forwarded=forwarded)
        if isinstance(decision, UpstreamError):
            status, message, kind = decision.status, decision.message, decision.kind
            yield LastChunk(assembler.fail(status, message, kind=kind))
            return
        yield LastChunk(held if raw else _tail(services, ex, assembler, decision))


def _received(ex: Exchange, assembler: StreamAssembler) -> dict[str, Any]:
    """What the client has of a stream that ended early: the text forwarded so far, as a
    response in the dialect (tool calls still held never reached it)."""
    nothing = ex.dialect.calls_only(ex.dialect.text_response(ex.info, ""))
    return assembler.client_view(nothing)


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
