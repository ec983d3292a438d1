"""Answers the proxy makes itself: errors in the harness's dialect, whole rendered answers."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse, Response

from safeagents.exchange import (
    Attempt,
    Exchange,
    Services,
    UpstreamError,
    UpstreamStatus,
    check_status,
    clean_response_headers,
    parse_json_object,
)
from safeagents.protocols import Dialect

__all__ = [
    "dialect_error",
    "parse_upstream",
    "render",
    "response_headers",
    "upstream_failure",
    "upstream_refused",
]


def dialect_error(dialect: Dialect, status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse(dialect.error_body(status, message, kind=kind), status_code=status)


async def upstream_failure(
    services: Services, ex: Exchange, attempts: list[Attempt], error: UpstreamError
) -> Response:
    """Record the failed attempts and answer with a retryable error in the harness's dialect."""
    services.metrics.inc("safeagents_upstream_errors_total", kind=error.kind)
    await services.recorder.record_failure(ex, attempts, "error", error.message)
    return dialect_error(ex.dialect, error.status, error.message, error.kind)


async def upstream_refused(
    services: Services, ex: Exchange, attempts: list[Attempt], refused: UpstreamStatus
) -> Response:
    """Record and pass on an upstream 4xx unchanged (context too long, bad model name…)."""
    await services.recorder.record_failure(
        ex, attempts, "error", f"upstream answered {refused.status}"
    )
    return Response(refused.content, status_code=refused.status, headers=refused.headers)


def render(ex: Exchange, delivered: dict[str, Any]) -> Response:
    """A complete answer in the shape the harness asked for (JSON or a whole SSE stream)."""
    if ex.stream:
        return Response(
            ex.dialect.stream_events(delivered, ex.info), media_type="text/event-stream"
        )
    return JSONResponse(delivered)


def parse_upstream(status: int, content: bytes, headers: Any) -> dict[str, Any]:
    check_status(status, content, headers)
    return parse_json_object(content)


def response_headers(headers: Any) -> dict[str, str]:
    return clean_response_headers(headers, decoded=True)
