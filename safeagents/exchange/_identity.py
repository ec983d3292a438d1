"""Which session a request belongs to: path prefix, ``sa-`` key, harness headers, or a hash."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from safeagents.protocols import Dialect, RequestInfo

__all__ = [
    "SESSION_HEADERS",
    "Identity",
    "bearer_token",
    "key_session",
    "resolve_identity",
    "root_key",
    "split_session_key",
]

# codex sends ``session-id`` (with a hyphen; older builds sent ``session_id``)
SESSION_HEADERS = (
    "x-session-affinity",
    "x-session-id",
    "x-claude-code-session-id",
    "session_id",
    "session-id",
)
_MAX_ID = 200
KEY_MAC_LENGTH = 32
"""Hex digits of the HMAC that ends a session key the proxy issued: ``sa-{id}.{mac}``."""
_HEX = frozenset("0123456789abcdef")

Source = Literal["path", "key", "header", "hash"]


@dataclass(frozen=True, slots=True)
class Identity:
    id: str
    source: Source


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The API key of a request: ``Authorization: Bearer …`` or ``x-api-key``."""
    authorization = headers.get("authorization", "").strip()
    if authorization.lower().startswith("bearer "):
        token = authorization[7:].strip()
        if token:
            return token
    key = headers.get("x-api-key", "").strip()
    return key or None


def split_session_key(token: str) -> tuple[str, str | None] | None:
    """``sa-{id}.{mac}`` -> ``(id, mac)``; a bare ``sa-{id}`` -> ``(id, None)``; else ``None``.

    Either names session ``{id}``; only a valid ``mac`` (checked elsewhere) grants anything."""
    if not token.startswith("sa-"):
        return None
    name, dot, mac = token[3:].rpartition(".")
    if dot and name and len(mac) == KEY_MAC_LENGTH and _HEX.issuperset(mac):
        return name, mac
    return token[3:], None


def key_session(headers: Mapping[str, str]) -> str | None:
    """The session named by an ``sa-`` API key (issued or self-asserted), if any."""
    token = bearer_token(headers)
    parts = split_session_key(token) if token is not None else None
    return _clean(parts[0]) if parts is not None else None


def resolve_identity(
    path_id: str | None, headers: Mapping[str, str], conversation_root: str
) -> Identity:
    """First match wins: ``/s/{id}/…``, an ``sa-{id}`` key, a harness header, the prefix hash."""
    if path_id and (cleaned := _clean(path_id)):
        return Identity(cleaned, "path")
    if keyed := key_session(headers):
        return Identity(keyed, "key")
    for name in SESSION_HEADERS:
        value = headers.get(name)
        if value and (cleaned := _clean(value)):
            return Identity(cleaned, "header")
    return Identity("h-" + conversation_root[:24], "hash")


def root_key(dialect: Dialect, body: Mapping[str, Any], info: RequestInfo) -> str:
    """A hash of the conversation's root: its system prompt and first user message."""
    root = json.dumps([dialect.name, dialect.system_text(body), info.first_user_text])
    return hashlib.blake2b(root.encode(), digest_size=16).hexdigest()


def _clean(value: str) -> str | None:
    value = value.strip()
    if not value:
        return None
    if len(value) > _MAX_ID or not value.isprintable():
        return "x-" + hashlib.blake2b(value.encode(), digest_size=12).hexdigest()
    return value
