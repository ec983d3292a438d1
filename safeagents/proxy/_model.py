"""Model endpoints (chat, responses, messages): parse, identify, splice, forward, enforce."""

from __future__ import annotations

import json
import uuid
import zlib
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from safeagents._actions import AnalysisContext
from safeagents._registry import FALLBACK_HARNESS, UnknownHarnessError
from safeagents.protocols import Dialect, RequestInfo, session_prefix
from safeagents.proxy._exchange import Attempt, Decision, Exchange
from safeagents.proxy._identity import resolve_identity, root_key
from safeagents.proxy._replies import dialect_error, render
from safeagents.proxy._services import Services
from safeagents.proxy._sessions import plan_request
from safeagents.proxy._stream import complete_exchange, stream_exchange
from safeagents.store import SessionRecord

__all__ = ["BodyTooLarge", "handle_model", "read_body"]

CWD_HEADER = "x-safeagents-cwd"
HARNESS_HEADER = "x-safeagents-harness"


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
        body = json.loads(raw)
    except ValueError as error:
        return dialect_error(dialect, 400, f"request body is not valid JSON: {error}", "bad_json")
    if not isinstance(body, dict):
        return dialect_error(dialect, 400, "request body must be a JSON object", "bad_json")
    try:
        info = dialect.parse_request(body)
    except (TypeError, ValueError, AttributeError) as error:
        return dialect_error(dialect, 400, f"malformed {dialect.name} request: {error}", "bad_body")
    ex = await _prepare(services, request, dialect, body, info)
    if ex.session is not None and ex.session.stopped and _enforcing_stop(services, ex):
        return await _already_stopped(services, ex)
    if info.stream:
        return await stream_exchange(services, ex)
    return await complete_exchange(services, ex)


async def _prepare(
    services: Services, request: Request, dialect: Dialect, body: dict[str, Any], info: RequestInfo
) -> Exchange:
    path_id, api_path = session_prefix(request.url.path)
    headers = request.headers
    root = root_key(dialect.name, body, info)
    identity = resolve_identity(path_id, headers, root)
    live = await services.store.live_state(identity.id)
    plan = plan_request(dialect, body, info, live.session, live.hidden, root)
    upstream_body = plan.upstream_body
    if services.config.capture_tokens:
        upstream_body = dialect.request_token_fields(upstream_body)
    cwd = headers.get(CWD_HEADER) or (live.session.cwd if live.session else services.config.cwd)
    return Exchange(
        id=uuid.uuid4().hex,
        session_id=identity.id,
        dialect=dialect,
        info=info,
        body=body,
        plan=plan,
        harness=_harness(services, info, live.session, headers.get(HARNESS_HEADER)),
        analysis=AnalysisContext(cwd=cwd),
        root=root,
        session=live.session,
        upstream_url=services.upstream.url(api_path, request.url.query, model=True),
        upstream_headers=services.upstream.headers(headers, model=True),
        upstream_body=upstream_body,
    )


def _harness(
    services: Services, info: RequestInfo, session: SessionRecord | None, override: str | None
) -> str:
    registry = services.engine.registry
    if override:
        try:
            return registry.harness(override).name
        except UnknownHarnessError:
            pass
    if info.has_tools:
        return registry.detect(info.tool_names).name
    return session.harness if session is not None and session.harness else FALLBACK_HARNESS


def _enforcing_stop(services: Services, ex: Exchange) -> bool:
    config = services.config
    return config.mode == "enforce" and config.strategy == "stop" and ex.plan.kind == "main"


async def _already_stopped(services: Services, ex: Exchange) -> Response:
    """A stopped run's later requests get the stop answer without reaching the upstream."""
    text = "safeagents stopped this run after a blocked tool call; it cannot continue."
    delivered = ex.dialect.text_response(ex.info, text)
    attempt = Attempt(kind=ex.plan.kind, request=ex.upstream_body)
    attempt.finish(None)
    attempt.delivered = delivered
    await services.recorder.record(
        ex, Decision(delivered=delivered, attempts=[attempt], stopped=True)
    )
    return render(ex, delivered)
