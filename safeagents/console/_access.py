"""Who may see the console: the admin API's rules (docs/security.md), plus a cookie for browsers.

A browser cannot send ``Authorization`` on a page load, so ``/ui/?token=TOKEN`` checks the
token once and keeps it in an HttpOnly, same-site cookie; every later request presents it
as if it were the header. An ``sa-{id}`` session key confines its holder to session ``{id}``.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.requests import Request

from safeagents.exchange import Access, Credentials

__all__ = ["COOKIE", "TOKEN_PARAM", "request_access", "token_access"]

COOKIE = "safeagents_console"
TOKEN_PARAM = "token"


def _with_bearer(headers: Mapping[str, str], token: str) -> dict[str, str]:
    return {**headers, "authorization": f"Bearer {token}"}


def request_access(credentials: Credentials, request: Request) -> Access:
    """What the caller proved, by its ``Authorization`` header or else the console's cookie."""
    headers: Mapping[str, str] = request.headers
    cookie = request.cookies.get(COOKIE)
    if "authorization" not in headers and cookie:
        headers = _with_bearer(headers, cookie)
    return credentials.admin_access(headers)


def token_access(credentials: Credentials, token: str) -> Access:
    """What ``token`` (from ``?token=``) would prove."""
    return credentials.admin_access(_with_bearer({}, token))
