"""``safeagents serve``: the intercepting proxy between an unmodified harness and its model.

Every tool call of every answer is checked by the rule engine before the harness sees it;
blocked calls are withheld and the model is re-asked (or the call rewritten, or the run
stopped), and every exchange is recorded in the :mod:`safeagents.store`.
"""

from __future__ import annotations

from safeagents.exchange import (
    DEFAULT_BODY_LIMIT,
    DEFAULT_RESPONSE_LIMIT,
    SESSION_HEADERS,
    Metrics,
    Mode,
    ProxyConfig,
    Strategy,
    is_loopback,
)
from safeagents.proxy._app import create_app
from safeagents.proxy._serve import ProxyServer, serve

__all__ = [
    "DEFAULT_BODY_LIMIT",
    "DEFAULT_RESPONSE_LIMIT",
    "SESSION_HEADERS",
    "Metrics",
    "Mode",
    "ProxyConfig",
    "ProxyServer",
    "Strategy",
    "create_app",
    "is_loopback",
    "serve",
]
