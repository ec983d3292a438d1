"""Answers the proxy makes itself: errors in the harness's dialect, whole rendered answers."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse, Response

from safeagents.exchange import (
    Exchange,
    Outcome,
    UpstreamError,
    UpstreamStatus,
    check_status,
    clean_response_headers,
    parse_json_object,
)
from safeagents.protocols import Dialect

__all__ = [
    "dialect_error",
    "error_reply",
    "parse_upstream",
    "render",
    "response_headers",
    "upstream_failure",
    "upstream_refused",
]


def dialect_error(dialect: Dialect, status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse(dialect.error_body(status, message, kind=kind), status_code=status)


def error_reply(ex: Exchange, error: UpstreamError) -> JSONResponse:
    """A retryable error in the harness's dialect."""
    return dialect_error(ex.dialect, error.status, error.message, error.kind)


async def upstream_failure(outcome: Outcome, error: UpstreamError) -> Response:
    """Record an upstream fault and answer with it in the harness's dialect."""
    await outcome.upstream_failed(error)
    return error_reply(outcome.ex, error)


async def upstream_refused(outcome: Outcome, refused: UpstreamStatus) -> Response:
    """Record and pass on an upstream 4xx unchanged (context too long, bad model name…)."""
    await outcome.fail(f"upstream answered {refused.status}")
    bridge = outcome.ex.bridge
    if bridge is not None:  # the harness gets the chat server's refusal in its own dialect
        return JSONResponse(bridge.error_body(refused.status, refused.content), refused.status)
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
