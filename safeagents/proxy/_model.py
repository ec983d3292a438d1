"""Model endpoints (chat, responses, messages): parse, identify, splice, forward, enforce."""

from __future__ import annotations

import zlib
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from safeagents.exchange import (
    Exchange,
    Outcome,
    Services,
    enforcing_stop,
    prepare_exchange,
    upstream_path,
)
from safeagents.protocols import (
    MAX_REQUEST_DEPTH,
    Dialect,
    RequestInfo,
    loads_json,
    session_prefix,
)
from safeagents.proxy._replies import dialect_error, render
from safeagents.proxy._stream import complete_exchange, stream_exchange

__all__ = ["BodyTooLarge", "handle_model", "read_body"]


class BodyTooLarge(Exception):
    pass


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, at most ``limit`` bytes (gzip/deflate bodies are inflated)."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding in ("gzip", "deflate"):
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)
        inflated = inflater.decompress(bytes(body), limit + 1)
        if len(inflated) > limit or inflater.unconsumed_tail:
            raise BodyTooLarge
        return inflated
    return bytes(body)


async def handle_model(services: Services, request: Request, dialect: Dialect) -> Response:
    try:
        raw = await read_body(request, services.config.body_limit)
    except BodyTooLarge:
        limit = services.config.body_limit
        return dialect_error(dialect, 413, f"request body exceeds {limit} bytes", "too_large")
    except zlib.error as error:
        return dialect_error(dialect, 400, f"cannot inflate the request body: {error}", "bad_body")
    try:
        body = loads_json(raw, MAX_REQUEST_DEPTH, finite=True)
    except ValueError as error:
        return dialect_error(dialect, 400, f"request body is not valid JSON: {error}", "bad_json")
    if not isinstance(body, dict):
        return dialect_error(dialect, 400, "request body must be a JSON object", "bad_json")
    try:
        info = dialect.parse_request(body)
    except (TypeError, ValueError, AttributeError) as error:
        return dialect_error(dialect, 400, f"malformed {dialect.name} request: {error}", "bad_body")
    ex = (await _prepare(services, request, dialect, body, info)).encoded(raw)
    outcome = Outcome(services, ex)
    if enforcing_stop(services, ex):
        return render(ex, await outcome.stopped())
    if info.stream:
        return await stream_exchange(outcome)
    return await complete_exchange(outcome)


async def _prepare(
    services: Services, request: Request, dialect: Dialect, body: dict[str, Any], info: RequestInfo
) -> Exchange:
    path_id, _ = session_prefix(request.url.path)
    return await prepare_exchange(
        services,
        dialect,
        body,
        info,
        path_id=path_id,
        headers=request.headers,
        upstream_url=services.upstream.url(
            upstream_path(services, dialect), request.url.query, model=True
        ),
    )
