"""The console on its own (``safeagents ui``): a store copied off a training machine, say."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route

from safeagents._firewall import Firewall
from safeagents._thread_server import stopping_state
from safeagents.console._app import CONSOLE_PREFIX, create_console
from safeagents.console._context import ConsoleSource
from safeagents.exchange import Credentials
from safeagents.plugins import ConsoleSection
from safeagents.store import Store

__all__ = ["standalone_app"]


def standalone_app(
    store: Store,
    firewall: Firewall,
    credentials: Credentials,
    *,
    sections: Sequence[ConsoleSection] = (),
) -> Starlette:
    """The console at ``/ui`` (the same URLs as in the proxy); ``/`` leads there. The store is
    closed when the app stops."""
    source = ConsoleSource(store, firewall, credentials)

    async def home(request: Request) -> Response:
        return RedirectResponse(CONSOLE_PREFIX + "/", status_code=307)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        try:
            async with stopping_state() as state:
                yield state
        finally:
            await store.close()

    return Starlette(
        routes=[
            Route("/", home, methods=["GET"]),
            Route(CONSOLE_PREFIX, home, methods=["GET"]),
            Mount(CONSOLE_PREFIX, app=create_console(lambda: source, sections=sections)),
        ],
        lifespan=lifespan,
    )
