"""The proxy as a Starlette app: model endpoints, admin API, metrics, and pass-through."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from safeagents._firewall import Firewall
from safeagents._thread_server import stopping_state
from safeagents.console import CONSOLE_PREFIX, ConsoleSource, create_console, plugin_sections
from safeagents.exchange import (
    ProxyConfig,
    Services,
    Upstream,
    build_firewall,
    canonical_aliases,
    start_aliases,
)
from safeagents.protocols import (
    CHAT,
    MESSAGES,
    Dialect,
    canonical_path,
    dialect_for_path,
    passes_through,
    unchecked_model_endpoint,
)
from safeagents.proxy._admin import ADMIN_PREFIX, error, handle_admin, handle_metrics, model_denied
from safeagents.proxy._model import handle_model
from safeagents.proxy._passthrough import handle_passthrough
from safeagents.proxy._replies import dialect_error
from safeagents.proxy._streaming import BodyStream
from safeagents.store import Store, StoreError, open_store

__all__ = ["create_app"]

logger = logging.getLogger("safeagents.proxy")
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
_SERVED = (
    "model requests go to POST /v1/chat/completions, /v1/responses or /v1/messages; "
    "other writes pass only if listed in safeagents.protocols.PASSTHROUGH_WRITES"
)


def _error_dialect(path: str) -> Dialect:
    """The error shape for a refused path: Anthropic's for its paths, else OpenAI's."""
    lowered = path.lower()
    return MESSAGES if "messages" in lowered or "anthropic" in lowered else CHAT


async def _internal_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, StoreError):  # nothing is forwarded that cannot be recorded
        logger.error("the store failed on %s %s: %s", request.method, request.url.path, exc)
        body = {"error": {"message": f"safeagents cannot use its store: {exc}", "type": "store"}}
        return JSONResponse(body, status_code=503)
    logger.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    body = {"error": {"message": f"safeagents internal error: {exc!r}", "type": "server_error"}}
    return JSONResponse(body, status_code=500)


def create_app(
    config: ProxyConfig,
    *,
    firewall: Firewall | None = None,
    store: Store | None = None,
    upstream: Upstream | None = None,
    seed_aliases: bool = True,
) -> Starlette:
    """The proxy app; the store, upstream client and firewall live for the app's lifespan.

    At start-up ``config.model_aliases`` are applied to the store's aliases (those set
    through the admin API stay: :func:`~safeagents.exchange.start_aliases`) unless
    ``seed_aliases`` is false (a worker process: its parent did that once for all)."""
    if config.needs_admin_token and not config.admin_token:
        raise ValueError(f"refusing to serve on {config.host} (beyond loopback) without a token")
    firewall = firewall or build_firewall(config)
    aliases = canonical_aliases(firewall.registry, config.model_aliases)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        services = Services.build(config, firewall, store or open_store(config.store), upstream)
        app.state.services = services
        try:
            if seed_aliases:
                await start_aliases(services.store, aliases)
            async with stopping_state() as state:
                yield state
        finally:
            await services.aclose()

    async def dispatch(request: Request) -> Response:
        services: Services = request.app.state.services
        path, method = canonical_path(request.url.path), request.method
        if path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/"):
            return await handle_admin(services, request, path[len(ADMIN_PREFIX) :])
        if path.lower() == "/safeagents" or path.lower().startswith("/safeagents/"):
            return error(404, f"no endpoint {path}; the admin API lives under {ADMIN_PREFIX}/")
        if path == "/metrics":
            return await handle_metrics(services, request)
        if (denied := model_denied(services, request, path)) is not None:
            return denied
        dialect = dialect_for_path(path) if method == "POST" else None
        if dialect is None:
            if unchecked_model_endpoint(method, path):
                message = f"safeagents does not check {method} {path}; {_SERVED}"
                return dialect_error(_error_dialect(path), 404, message, "unchecked_endpoint")
            if not passes_through(method, path):
                message = f"safeagents does not forward {method} {path}; {_SERVED}"
                return dialect_error(_error_dialect(path), 404, message, "not_forwarded")
            return await handle_passthrough(services, request)
        services.metrics.inc("safeagents_in_flight_requests")

        async def done() -> None:
            services.metrics.inc("safeagents_in_flight_requests", -1)

        try:
            response = await handle_model(services, request, dialect)
        except BaseException:
            await done()
            raise
        if isinstance(response, BodyStream):
            response.also_on_close(done)  # a stream is in flight until it ends
        else:
            await done()
        return response

    def console_source() -> ConsoleSource:
        services: Services = app.state.services
        return ConsoleSource(services.store, services.firewall, services.credentials)

    async def to_console(request: Request) -> Response:
        return RedirectResponse(CONSOLE_PREFIX + "/", status_code=308)

    sections = plugin_sections(firewall.registry, [Path(run) for run in config.console_runs])
    routes: list[BaseRoute] = [
        Route(CONSOLE_PREFIX, to_console, methods=["GET"]),
        Mount(CONSOLE_PREFIX, app=create_console(console_source, sections=sections)),
        Route("/{path:path}", dispatch, methods=_METHODS),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={Exception: _internal_error},
    )
    return app
