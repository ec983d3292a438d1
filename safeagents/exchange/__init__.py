"""One model request's way through safeagents, whatever front end received it.

prepare (identify the session, splice its hidden history in, pick the harness) → the
upstream → enforce (check every tool call; re-ask, rewrite or stop) → record. Both
``safeagents serve`` (:mod:`safeagents.proxy`) and ``safeagents intercept``
(:mod:`safeagents.intercept`) are thin adapters over this package, which knows neither
Starlette nor mitmproxy.
"""

from __future__ import annotations

from safeagents.exchange._aliases import ModelAliases, canonical_aliases, start_aliases
from safeagents.exchange._auth import Access, Credentials, session_secret
from safeagents.exchange._config import (
    DEFAULT_BODY_LIMIT,
    DEFAULT_RESPONSE_LIMIT,
    Mode,
    ProxyConfig,
    Strategy,
    is_loopback,
)
from safeagents.exchange._enforce import Enforcer
from safeagents.exchange._exchange import Attempt, Decision, Exchange, ExchangeFailed
from safeagents.exchange._http import Client, Headers, HTTPError, UpstreamTimeout
from safeagents.exchange._identity import (
    SESSION_HEADERS,
    Identity,
    bearer_token,
    key_session,
    resolve_identity,
    root_key,
    split_session_key,
)
from safeagents.exchange._metrics import Metrics
from safeagents.exchange._outcome import ABORTED, STOPPED_TEXT, Outcome
from safeagents.exchange._prepare import (
    CWD_HEADER,
    HARNESS_HEADER,
    bridge_for,
    enforcing_stop,
    prepare_exchange,
    upstream_path,
)
from safeagents.exchange._recorder import Recorder
from safeagents.exchange._redact import redact_url
from safeagents.exchange._services import Services, build_firewall
from safeagents.exchange._transport import Transport, TransportResponse
from safeagents.exchange._upstream import (
    HOP_BY_HOP,
    ResponseTooLarge,
    Upstream,
    UpstreamError,
    UpstreamStatus,
    check_status,
    clean_response_headers,
    parse_json_object,
    upstream_error,
)

__all__ = [
    "ABORTED",
    "CWD_HEADER",
    "DEFAULT_BODY_LIMIT",
    "DEFAULT_RESPONSE_LIMIT",
    "HARNESS_HEADER",
    "HOP_BY_HOP",
    "SESSION_HEADERS",
    "STOPPED_TEXT",
    "Access",
    "Attempt",
    "Client",
    "Credentials",
    "Decision",
    "Enforcer",
    "Exchange",
    "ExchangeFailed",
    "HTTPError",
    "Headers",
    "Identity",
    "Metrics",
    "Mode",
    "ModelAliases",
    "Outcome",
    "ProxyConfig",
    "Recorder",
    "ResponseTooLarge",
    "Services",
    "Strategy",
    "Transport",
    "TransportResponse",
    "Upstream",
    "UpstreamError",
    "UpstreamStatus",
    "UpstreamTimeout",
    "bearer_token",
    "bridge_for",
    "build_firewall",
    "canonical_aliases",
    "check_status",
    "clean_response_headers",
    "enforcing_stop",
    "is_loopback",
    "key_session",
    "parse_json_object",
    "prepare_exchange",
    "redact_url",
    "resolve_identity",
    "root_key",
    "session_secret",
    "split_session_key",
    "start_aliases",
    "upstream_error",
    "upstream_path",
]
