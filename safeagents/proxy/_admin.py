"""The admin API under ``/safeagents/v1/`` and ``/metrics``, with its access rules.

With ``--admin-token`` every call but ``health`` needs ``Authorization: Bearer TOKEN``.
An ``sa-{id}`` key only ever reads session ``{id}``. Without a token (loopback only) the
API is open, except that an ``sa-`` key still limits a caller to its own session.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from safeagents._registry import UnknownHarnessError
from safeagents.exchange import Services, bearer_token, key_session, resolve_identity
from safeagents.protocols import MAX_REQUEST_DEPTH, loads_json
from safeagents.proxy._model import BodyTooLarge, read_body

__all__ = ["ADMIN_PREFIX", "handle_admin", "handle_metrics"]

ADMIN_PREFIX = "/safeagents/v1"
_OUTCOME_LIMIT = 1024 * 1024
_ALIAS_LIMIT = 64 * 1024
_SESSION_LIMIT = 64 * 1024

Scope = tuple[Literal["admin", "session", "none"], str | None]


def error(status: int, message: str) -> JSONResponse:
    kinds = {
        400: "bad_request",
        401: "unauthorized",
        403: "forbidden",
        404: "not_found",
        405: "method_not_allowed",
        413: "too_large",
    }
    kind = kinds.get(status, "error")
    return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status)


def caller_scope(services: Services, headers: Mapping[str, str]) -> Scope:
    token = bearer_token(headers)
    admin_token = services.config.admin_token
    if admin_token and token and hmac.compare_digest(token.encode(), admin_token.encode()):
        return "admin", None
    session = key_session(headers)
    if session is not None:
        return "session", session
    if not admin_token:
        return "admin", None
    return "none", None


def _denied(scope: Scope, session_id: str | None = None) -> JSONResponse | None:
    """``None`` when ``scope`` may act (on ``session_id``, if given)."""
    kind, own = scope
    if kind == "admin":
        return None
    if kind == "none":
        return error(401, "this endpoint needs Authorization: Bearer <admin token>")
    if session_id is not None and session_id == own:
        return None
    return error(403, "a session key only gives access to its own session")


async def handle_metrics(services: Services, request: Request) -> Response:
    if request.method != "GET":
        return error(405, "use GET /metrics")
    if services.config.admin_token and caller_scope(services, request.headers)[0] != "admin":
        return error(401, "/metrics needs Authorization: Bearer <admin token>")
    return PlainTextResponse(
        services.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8"
    )


async def handle_admin(services: Services, request: Request, rest: str) -> Response:
    parts = [part for part in rest.strip("/").split("/") if part]
    method = request.method
    if parts == ["health"]:
        return _health(services) if method == "GET" else error(405, "use GET")
    scope = caller_scope(services, request.headers)
    if parts == ["rules"]:
        if method != "GET":
            return error(405, "use GET")
        if scope[0] == "none":
            return error(401, "this endpoint needs Authorization: Bearer <admin token>")
        return _rules(services)
    if parts == ["sessions"]:
        if method != "GET":
            return error(405, "use GET")
        return await _list(services, request, scope)
    if len(parts) == 2 and parts[0] == "sessions":
        if method == "PUT":
            return _denied(scope) or await _open(services, request, parts[1])
        if method != "GET":
            return error(405, 'use GET, or PUT with {"cwd": "/abs/path"}')
        return _denied(scope, parts[1]) or await _show(services, request, parts[1])
    if len(parts) == 3 and parts[0] == "sessions" and parts[2] == "outcome":
        if method != "POST":
            return error(405, "use POST with a JSON object")
        return _denied(scope) or await _outcome(services, request, parts[1])
    if parts == ["aliases"]:
        if method != "GET":
            return error(405, "use GET")
        return _denied(scope) or JSONResponse({"aliases": dict(await services.aliases.current())})
    if len(parts) == 2 and parts[0] == "aliases":
        if method not in ("GET", "PUT", "DELETE"):
            return error(405, 'use GET, DELETE, or PUT with {"model": "NAME"}')
        return _denied(scope) or await _alias(services, request, parts[1])
    return error(404, f"no admin endpoint {method} {ADMIN_PREFIX}/{'/'.join(parts)}")


def _health(services: Services) -> JSONResponse:
    config = services.config
    return JSONResponse(
        {
            "status": "ok",
            "upstream": services.upstream.root,
            "mode": config.mode,
            "strategy": config.strategy,
            "max_reasks": config.max_reasks,
            "capture_tokens": config.capture_tokens,
            "rules": len(services.firewall.rules.rules),
        }
    )


def _rules(services: Services) -> JSONResponse:
    rules = [
        {
            "id": rule.id,
            "pack": rule.pack,
            "category": rule.category,
            "severity": rule.severity,
            "action": rule.action,
            "enabled": rule.enabled,
            "description": rule.description,
            "message": rule.message,
            "source": str(rule.source),
        }
        for rule in services.firewall.rules.rules
    ]
    return JSONResponse({"rules": rules})


def _int_param(request: Request, name: str, default: int, ceiling: int) -> int:
    value = request.query_params.get(name, "")
    return max(0, min(int(value), ceiling)) if value.isdigit() else default


async def _list(services: Services, request: Request, scope: Scope) -> Response:
    kind, own = scope
    if kind == "none":
        return error(401, "this endpoint needs Authorization: Bearer <admin token>")
    if kind == "session":
        record = await services.store.get_session(own or "")
        found = [record] if record is not None else []
        return JSONResponse({"sessions": [session.to_json() for session in found]})
    limit = _int_param(request, "limit", 100, 10_000)
    offset = _int_param(request, "offset", 0, 10**9)
    sessions = await services.store.list_sessions(limit=limit, offset=offset)
    return JSONResponse({"sessions": [session.to_json() for session in sessions]})


async def _show(services: Services, request: Request, session_id: str) -> Response:
    record = await services.store.get_session(session_id)
    if record is None:
        return error(404, f"no session {session_id!r}")
    document: dict[str, Any] = record.to_json()
    if request.query_params.get("turns", "all") != "none":
        document["turns"] = [turn.to_json() for turn in await services.store.turns(session_id)]
    return JSONResponse(document)


async def _open(services: Services, request: Request, session_id: str) -> Response:
    """Open a session before its first request: ``{"cwd": ABSOLUTE, "harness": NAME?}``."""
    try:
        document = loads_json(
            await read_body(request, _SESSION_LIMIT), MAX_REQUEST_DEPTH, finite=True
        )
    except BodyTooLarge:
        return error(413, "a session must be under 64 KiB")
    except ValueError as problem:
        return error(400, f'the session must be JSON like {{"cwd": "/abs/path"}}: {problem}')
    if not isinstance(document, dict):
        return error(400, 'the session must be a JSON object like {"cwd": "/abs/path"}')
    cwd, harness = document.get("cwd"), document.get("harness", "")
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        return error(400, '"cwd" must be an absolute path')
    if not isinstance(harness, str):
        return error(400, '"harness" must be a harness name')
    if harness:
        try:
            harness = services.firewall.registry.harness(harness).name
        except UnknownHarnessError as problem:
            return error(400, str(problem))
    session_id = resolve_identity(session_id, {}, "").id  # the id /s/{session_id}/ gets
    record = await services.store.open_session(session_id, cwd=cwd, harness=harness)
    return JSONResponse(record.to_json())


async def _outcome(services: Services, request: Request, session_id: str) -> Response:
    try:
        outcome = loads_json(
            await read_body(request, _OUTCOME_LIMIT), MAX_REQUEST_DEPTH, finite=True
        )
    except BodyTooLarge:
        return error(413, "an outcome must be under 1 MiB")
    except ValueError as problem:
        return error(400, f"the outcome must be a JSON object: {problem}")
    if not isinstance(outcome, dict):
        return error(400, 'the outcome must be a JSON object, e.g. {"success": true}')
    record = await services.store.set_outcome(session_id, outcome)
    if record is None:
        return error(404, f"no session {session_id!r}")
    services.recorder.session_closed(record)
    return JSONResponse(record.to_json())


async def _alias(services: Services, request: Request, name: str) -> Response:
    """One harness's alias: read (GET), set (PUT ``{"model": …}``) or drop (DELETE)."""
    try:
        harness = services.firewall.registry.harness(name).name
    except UnknownHarnessError as problem:
        if request.method == "PUT":
            return error(400, str(problem))
        harness = name  # an alias stored for a harness that is no longer installed
    if request.method == "GET":
        model = (await services.aliases.current()).get(harness)
        if model is None:
            return error(404, f"harness {harness!r} has no model alias")
        return JSONResponse({"harness": harness, "model": model})
    if request.method == "DELETE":
        if not await services.aliases.delete(harness):
            return error(404, f"harness {harness!r} has no model alias")
        return JSONResponse({"harness": harness, "deleted": True})
    try:
        document = loads_json(
            await read_body(request, _ALIAS_LIMIT), MAX_REQUEST_DEPTH, finite=True
        )
    except BodyTooLarge:
        return error(413, "an alias must be under 64 KiB")
    except ValueError as problem:
        return error(400, f'the alias must be JSON like {{"model": "NAME"}}: {problem}')
    model = document.get("model") if isinstance(document, dict) else None
    if not isinstance(model, str) or not model.strip():
        return error(400, 'the alias must be JSON like {"model": "NAME"}, NAME not empty')
    model = model.strip()
    await services.aliases.set(harness, model)
    return JSONResponse({"harness": harness, "model": model})
