"""Everything that is not a model endpoint goes to the upstream untouched, both ways streamed."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from safeagents.exchange import Services, UpstreamError, clean_response_headers
from safeagents.exchange import TransportResponse as UpstreamResponse
from safeagents.protocols import forwarded_path, session_prefix
from safeagents.proxy._model import BodyTooLarge
from safeagents.proxy._streaming import BodyStream

__all__ = ["handle_passthrough"]


async def _limited(request: Request, limit: int) -> AsyncIterator[bytes]:
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > limit:
            raise BodyTooLarge
        yield chunk


async def _relay(upstream: UpstreamResponse) -> AsyncGenerator[bytes, None]:
    async for chunk in upstream.aiter_raw():
        yield chunk


def _too_large(limit: int) -> JSONResponse:
    message = f"request body exceeds {limit} bytes"
    return JSONResponse(
        {"error": {"message": message, "type": "invalid_request_error", "code": "too_large"}},
        status_code=413,
    )


async def handle_passthrough(services: Services, request: Request) -> Response:
    limit = services.config.body_limit
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        return _too_large(limit)
    _, path = session_prefix(request.url.path)
    url = services.upstream.url(forwarded_path(path), request.url.query)
    headers = services.upstream.headers(request.headers, model=False)
    has_body = "content-length" in request.headers or "transfer-encoding" in request.headers
    content = _limited(request, limit) if has_body else None
    try:
        upstream = await services.upstream.open(request.method, url, headers, content)
    except BodyTooLarge:
        return _too_large(limit)
    except UpstreamError as error:
        services.metrics.inc("safeagents_upstream_errors_total", kind=error.kind)
        body = {"error": {"message": error.message, "type": "server_error", "code": error.kind}}
        return JSONResponse(body, status_code=error.status)
    services.metrics.inc("safeagents_passthrough_total")
    return BodyStream(
        _relay(upstream),
        status_code=upstream.status_code,
        headers=clean_response_headers(upstream.headers, decoded=False),
        on_close=upstream.aclose,
    )
