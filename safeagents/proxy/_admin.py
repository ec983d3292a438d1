"""The admin API under ``/safeagents/v1/`` and ``/metrics``, with its access rules
(docs/security.md), and the credential model endpoints need.

With ``--admin-token`` every admin call needs ``Authorization: Bearer TOKEN``, except that
``health`` answers liveness to anyone and a session key the proxy issued (``sa-{id}.{mac}``)
reads session ``{id}``. Without an admin token (loopback only) the API is open, except that
an ``sa-`` key still limits a caller to its own session. With either token, model endpoints
and the pass-through need the client token, the admin token or a session key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from safeagents._registry import UnknownHarnessError
from safeagents.exchange import Services, redact_url, resolve_identity
from safeagents.protocols import (
    MAX_REQUEST_DEPTH,
    Sampling,
    SamplingError,
    dialect_for_path,
    json_bytes,
    loads_json,
    session_prefix,
)
from safeagents.proxy._model import BodyTooLarge, read_body
from safeagents.proxy._replies import dialect_error

__all__ = ["ADMIN_PREFIX", "handle_admin", "handle_metrics", "model_denied"]

ADMIN_PREFIX = "/safeagents/v1"
_OUTCOME_LIMIT = 1024 * 1024
_ALIAS_LIMIT = 64 * 1024
_SESSION_LIMIT = 64 * 1024

Scope = tuple[Literal["admin", "client", "session", "none"], str | None]
_NEEDS_ADMIN = "this endpoint needs Authorization: Bearer <admin token>"


class _Json(JSONResponse):
    """An admin answer; text with lone surrogates (a model may send ``\\ud800``, and the
    store keeps it) goes out as ``\\u`` escapes, since UTF-8 cannot hold it."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json_bytes(content)


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
    return _Json({"error": {"message": message, "type": kind}}, status_code=status)


def caller_scope(services: Services, headers: Mapping[str, str]) -> Scope:
    access = services.credentials.admin_access(headers)
    return access.kind, access.session


def model_denied(services: Services, request: Request, path: str) -> Response | None:
    """``None`` when the caller may use a model endpoint or the pass-through at ``path``;
    else a 401/403 in the harness's dialect. Free when no token is configured."""
    credentials = services.credentials
    if not credentials.required:
        return None
    access = credentials.model_access(request.headers)
    if access.kind == "none":
        return _refused(path, 401, _MODEL_KEY)
    if access.session is not None:
        path_id, _ = session_prefix(path)
        if path_id is not None and resolve_identity(path_id, {}, "").id != access.session:
            return _refused(path, 403, "a session key only gives access to its own session")
    return None


_MODEL_KEY = (
    "this proxy needs an API key: the client token, or the session key from "
    "PUT /safeagents/v1/sessions/{id} (Authorization: Bearer or x-api-key)"
)


def _refused(path: str, status: int, message: str) -> Response:
    dialect = dialect_for_path(path)
    kind = "unauthorized" if status == 401 else "forbidden"
    if dialect is not None:
        return dialect_error(dialect, status, message, kind)
    return error(status, message)


def _denied(scope: Scope, session_id: str | None = None) -> JSONResponse | None:
    """``None`` when ``scope`` may act (on ``session_id``, if given)."""
    kind, own = scope
    if kind == "admin":
        return None
    if kind != "session":
        return error(401, _NEEDS_ADMIN)
    if session_id is not None and session_id == own:
        return None
    if session_id is not None:
        return error(403, "a session key only gives access to its own session")
    return error(403, "a session key only reads its own session; this needs the admin token")


async def handle_metrics(services: Services, request: Request) -> Response:
    if request.method != "GET":
        return error(405, "use GET /metrics")
    credentials = services.credentials
    if not credentials.open_admin and credentials.admin_access(request.headers).kind != "admin":
        return error(401, "/metrics needs Authorization: Bearer <admin token>")
    return PlainTextResponse(
        services.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8"
    )


async def handle_admin(services: Services, request: Request, rest: str) -> Response:
    parts = [part for part in rest.strip("/").split("/") if part]
    method = request.method
    scope = caller_scope(services, request.headers)
    if parts == ["health"]:
        return _health(services, scope) if method == "GET" else error(405, "use GET")
    if parts == ["rules"]:
        if method != "GET":
            return error(405, "use GET")
        return _denied(scope) or _rules(services)
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
    if len(parts) == 3 and parts[0] == "sessions" and parts[2] == "key":
        if method != "GET":
            return error(405, "use GET")
        return _denied(scope) or _key(services, parts[1])
    if len(parts) == 3 and parts[0] == "sessions" and parts[2] == "outcome":
        if method != "POST":
            return error(405, "use POST with a JSON object")
        return _denied(scope) or await _outcome(services, request, parts[1])
    if parts == ["aliases"]:
        if method != "GET":
            return error(405, "use GET")
        return _denied(scope) or _Json({"aliases": dict(await services.aliases.current())})
    if len(parts) == 2 and parts[0] == "aliases":
        if method not in ("GET", "PUT", "DELETE"):
            return error(405, 'use GET, DELETE, or PUT with {"model": "NAME"}')
        return _denied(scope) or await _alias(services, request, parts[1])
    return error(404, f"no admin endpoint {method} {ADMIN_PREFIX}/{'/'.join(parts)}")


def _health(services: Services, scope: Scope) -> JSONResponse:
    """Liveness for anyone; the configuration (never a credential) for the admin."""
    if scope[0] != "admin":
        return _Json({"status": "ok"})
    config = services.config
    return _Json(
        {
            "status": "ok",
            "upstream": redact_url(services.upstream.root),
            "mode": config.mode,
            "strategy": config.strategy,
            "max_reasks": config.max_reasks,
            "capture_tokens": config.capture_tokens,
            "chat_upstream": config.translates,
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
    return _Json({"rules": rules})


def _int_param(request: Request, name: str, default: int, ceiling: int) -> int:
    value = request.query_params.get(name, "")
    if not (value.isascii() and value.isdigit()):
        return default
    return ceiling if len(value) > len(str(ceiling)) else min(int(value), ceiling)


async def _list(services: Services, request: Request, scope: Scope) -> Response:
    kind, own = scope
    if kind not in ("admin", "session"):
        return error(401, _NEEDS_ADMIN)
    if kind == "session":
        record = await services.store.get_session(own or "")
        found = [record] if record is not None else []
        return _Json({"sessions": [session.to_json() for session in found]})
    limit = _int_param(request, "limit", 100, 10_000)
    offset = _int_param(request, "offset", 0, 10**9)
    sessions = await services.store.list_sessions(limit=limit, offset=offset)
    return _Json({"sessions": [session.to_json() for session in sessions]})


async def _show(services: Services, request: Request, session_id: str) -> Response:
    record = await services.store.get_session(session_id)
    if record is None:
        return error(404, f"no session {session_id!r}")
    document: dict[str, Any] = record.to_json()
    if request.query_params.get("turns", "all") != "none":
        document["turns"] = [turn.to_json() for turn in await services.store.turns(session_id)]
    return _Json(document)


async def _open(services: Services, request: Request, session_id: str) -> Response:
    """Open a session before its first request, or update it: ``{"cwd": ABSOLUTE?,
    "harness": NAME?, "sampling": {...}?}`` (``sampling`` makes it a training session)."""
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
    sampling = document.get("sampling")
    if cwd is None and sampling is None:
        return error(400, 'the session needs "cwd" (an absolute path), "sampling", or both')
    if cwd is not None and (not isinstance(cwd, str) or not cwd.startswith("/")):
        return error(400, '"cwd" must be an absolute path')
    if sampling is not None:
        try:
            sampling = Sampling.from_json(sampling).to_json()
        except SamplingError as problem:
            return error(400, f'"sampling": {problem}')
    if not isinstance(harness, str):
        return error(400, '"harness" must be a harness name')
    if harness:
        try:
            harness = services.firewall.registry.harness(harness).name
        except UnknownHarnessError as problem:
            return error(400, str(problem))
    session_id = resolve_identity(session_id, {}, "").id  # the id /s/{session_id}/ gets
    record = await services.store.open_session(
        session_id, cwd=cwd, harness=harness, sampling=sampling
    )
    return _Json({**record.to_json(), "key": services.credentials.key_for(session_id)})


def _key(services: Services, session_id: str) -> JSONResponse:
    """The session key for ``session_id`` (whether or not the session exists yet)."""
    session_id = resolve_identity(session_id, {}, "").id
    return _Json({"session": session_id, "key": services.credentials.key_for(session_id)})


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
    return _Json(record.to_json())


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
        return _Json({"harness": harness, "model": model})
    if request.method == "DELETE":
        if not await services.aliases.delete(harness):
            return error(404, f"harness {harness!r} has no model alias")
        return _Json({"harness": harness, "deleted": True})
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
    return _Json({"harness": harness, "model": model})
