"""The console as a Starlette app, mounted by the proxy at ``/ui`` or served on its own.

Every page passes the access check first (:mod:`._access`): the admin token, or a session key
for that session's own pages; without an admin token (loopback only) it is open, as the admin
API is. Add-on sections (``safeagents_console_sections``) are mounted under ``/{path}/``
behind the same check and listed in the navigation.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import urlencode

from jinja2 import Environment
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from safeagents.console import _views as views
from safeagents.console._access import COOKIE, TOKEN_PARAM, request_access, token_access
from safeagents.console._context import STATIC, ConsoleSource, SourceGetter, templates
from safeagents.exchange import Access
from safeagents.plugins import ConsoleSection

__all__ = ["CONSOLE_PREFIX", "create_console"]

CONSOLE_PREFIX = "/ui"
logger = logging.getLogger("safeagents.console")

View = Callable[[Environment, ConsoleSource, Request, Access], Awaitable[Response]]
_NEEDS_TOKEN = (
    "this console needs the proxy's admin token: open {root}/?token=TOKEN once "
    "(it is kept in a cookie for this site) or send Authorization: Bearer TOKEN"
)


def _gate(
    env: Environment, source: ConsoleSource, request: Request, *, admin_only: bool
) -> Access | Response:
    """The caller's access, or the answer instead of the page: a login (``?token=``), a 401
    or a 403."""
    token = request.query_params.get(TOKEN_PARAM)
    if token is not None:
        return _login(env, source, request, token)
    access = request_access(source.credentials, request)
    denied = _denied(env, request, access, admin_only=admin_only)
    return access if denied is None else denied


def _checked(
    env: Environment, source: SourceGetter, view: View, *, admin_only: bool
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        current = source()
        access = _gate(env, current, request, admin_only=admin_only)
        if isinstance(access, Response):
            return access
        try:
            return await view(env, current, request, access)
        except Exception:
            logger.exception("console page %s failed", request.url.path)
            message = "this page failed to render; the proxy's log has the details"
            return views.error_page(env, request, 500, message)

    return endpoint


def _denied(
    env: Environment, request: Request, access: Access, *, admin_only: bool
) -> Response | None:
    root = request.scope.get("root_path", "")
    if access.kind == "admin":
        return None
    if access.kind == "session" and not admin_only:
        return None
    if access.kind == "session":
        message = "a session key only shows its own session; this page needs the admin token"
        return views.error_page(env, request, 403, message)
    return views.error_page(env, request, 401, _NEEDS_TOKEN.format(root=root))


def _login(env: Environment, source: ConsoleSource, request: Request, token: str) -> Response:
    """``?token=``: keep a working token in a cookie and reload without it in the address."""
    if token_access(source.credentials, token).kind == "none":
        root = request.scope.get("root_path", "")
        return views.error_page(env, request, 401, _NEEDS_TOKEN.format(root=root))
    rest = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAM]
    target = request.url.path + ("?" + urlencode(rest) if rest else "")
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        COOKIE,
        token,
        httponly=True,
        samesite="strict",
        path=request.scope.get("root_path", "") or "/",
        secure=request.url.scheme == "https",
    )
    return response


class _Guarded:
    """An add-on section's app, reached only by the admin (the admin API's rule)."""

    def __init__(self, env: Environment, source: SourceGetter, app: ASGIApp) -> None:
        self.env, self.source, self.app = env, source, app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = _gate(self.env, self.source(), Request(scope, receive), admin_only=True)
            if isinstance(refused, Response):
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_console(source: SourceGetter, *, sections: Sequence[ConsoleSection] = ()) -> Starlette:
    """The console app; ``source`` gives the store, firewall and credentials per request."""
    shown = tuple(sections)
    env = templates(shown)

    def route(path: str, view: View, *, admin_only: bool = True) -> Route:
        return Route(path, _checked(env, source, view, admin_only=admin_only), methods=["GET"])

    async def not_found(request: Request, exc: Exception) -> Response:
        return views.error_page(env, request, 404, f"no console page {request.url.path}")

    routes: list[BaseRoute] = [
        route("/", views.sessions, admin_only=False),
        route("/events", views.events, admin_only=False),
        route("/sessions/{session_id:path}", views.session, admin_only=False),
        route("/rules", views.rules),
        route("/rules/{rule_id:path}", views.rule),
        route("/explain", views.explain),
        route("/aliases", views.aliases),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    routes.extend(
        Mount(f"/{section.path.strip('/')}", app=_Guarded(env, source, section.app))
        for section in shown
    )
    return Starlette(routes=routes, exception_handlers={404: not_found})
