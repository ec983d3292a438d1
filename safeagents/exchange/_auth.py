"""Who may do what (docs/security.md): the proxy's tokens and the session keys it issues.

A session key ``sa-{id}.{mac}`` is issued by the proxy (``mac`` = HMAC-SHA256 of ``id`` under
the session secret, 32 hex digits); it confines its holder to session ``{id}``. A bare
``sa-{id}`` still names a session (:mod:`._identity`) but grants nothing.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from safeagents.exchange._config import ProxyConfig
from safeagents.exchange._identity import (
    KEY_MAC_LENGTH,
    bearer_token,
    key_session,
    split_session_key,
)

__all__ = ["Access", "Credentials", "session_secret"]

AccessKind = Literal["admin", "client", "session", "none"]
_DERIVE = b"safeagents session keys v1"


@dataclass(frozen=True, slots=True)
class Access:
    """What a caller proved: the admin token, the client token, a session key, or nothing."""

    kind: AccessKind
    session: str | None = None
    """The one session a session key confines its holder to."""


_ADMIN = Access("admin")
_CLIENT = Access("client")
_NONE = Access("none")


def session_secret(config: ProxyConfig) -> bytes | None:
    """The key that signs session keys: ``session_secret``, else derived from the admin (else
    the client) token, so every worker and restart agrees; ``None`` when no token is set."""
    if config.session_secret:
        return config.session_secret.encode()
    token = config.admin_token or config.client_token
    if not token:
        return None
    return hmac.new(token.encode(), _DERIVE, hashlib.sha256).digest()


class Credentials:
    """The proxy's secrets, built once per process; every check is a constant-time compare
    (a session key costs one HMAC)."""

    __slots__ = ("_admin", "_client", "_secret", "open_admin", "required")

    def __init__(self, config: ProxyConfig) -> None:
        self._admin = config.admin_token.encode() if config.admin_token else None
        self._client = config.client_token.encode() if config.client_token else None
        self._secret = session_secret(config)
        self.required = config.model_auth_required
        """Model endpoints and pass-through need a credential."""
        self.open_admin = self._admin is None
        """No admin token: the admin API is open (the proxy is bound to loopback)."""

    def key_for(self, session_id: str) -> str:
        """The session key the proxy issues for ``session_id`` (bare when there is no secret:
        then nothing needs one)."""
        if self._secret is None:
            return f"sa-{session_id}"
        return f"sa-{session_id}.{self._mac(session_id)}"

    def admin_access(self, headers: Mapping[str, str]) -> Access:
        """Who calls the admin API; credentials come in ``Authorization: Bearer`` only."""
        token = _authorization(headers)
        if _same(token, self._admin):
            return _ADMIN
        if self.open_admin:
            own = key_session(headers)  # open API: any sa- key still limits its holder
            return Access("session", own) if own else _ADMIN
        own = self._verified(token)
        return Access("session", own) if own else _NONE

    def model_access(self, headers: Mapping[str, str]) -> Access:
        """Who calls a model endpoint or the pass-through: the harness's API-key slot
        (``Authorization: Bearer`` or ``x-api-key``)."""
        if not self.required:
            return _CLIENT
        token = bearer_token(headers)
        if _same(token, self._admin):
            return _ADMIN
        if _same(token, self._client):
            return _CLIENT
        own = self._verified(token)
        return Access("session", own) if own else _NONE

    def is_credential(self, value: str) -> bool:
        """A header value carrying one of the proxy's credentials (never sent upstream)."""
        token = value.strip()
        if token[:7].lower() == "bearer ":
            token = token[7:].strip()
        return token.startswith("sa-") or _same(token, self._admin) or _same(token, self._client)

    def _verified(self, token: str | None) -> str | None:
        parts = split_session_key(token) if token and self._secret is not None else None
        if parts is None:
            return None
        session, mac = parts
        return session if mac is not None and hmac.compare_digest(mac, self._mac(session)) else None

    def _mac(self, session_id: str) -> str:
        assert self._secret is not None
        digest = hmac.new(self._secret, session_id.encode(), hashlib.sha256).hexdigest()
        return digest[:KEY_MAC_LENGTH]


def _authorization(headers: Mapping[str, str]) -> str | None:
    value = headers.get("authorization", "").strip()
    return (value[7:].strip() or None) if value[:7].lower() == "bearer " else None


def _same(token: str | None, secret: bytes | None) -> bool:
    return token is not None and secret is not None and hmac.compare_digest(token.encode(), secret)
