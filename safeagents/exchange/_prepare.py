"""A parsed model request becomes an :class:`Exchange`: shared by ``serve`` and ``intercept``.

Nothing here knows the web framework: headers are any case-insensitive (or lower-cased)
mapping, and the upstream URL is worked out by the front end.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from safeagents._actions import AnalysisContext
from safeagents._registry import FALLBACK_HARNESS, UnknownHarnessError
from safeagents.exchange._exchange import Exchange
from safeagents.exchange._identity import resolve_identity, root_key
from safeagents.exchange._services import Services
from safeagents.exchange._sessions import plan_request
from safeagents.protocols import Dialect, RequestInfo
from safeagents.store import SessionRecord

__all__ = [
    "CWD_HEADER",
    "HARNESS_HEADER",
    "enforcing_stop",
    "prepare_exchange",
]

CWD_HEADER = "x-safeagents-cwd"
HARNESS_HEADER = "x-safeagents-harness"


async def prepare_exchange(
    services: Services,
    dialect: Dialect,
    body: dict[str, Any],
    info: RequestInfo,
    *,
    path_id: str | None,
    headers: Mapping[str, str],
    upstream_url: str,
) -> Exchange:
    """Identify the session, splice its hidden history in, pick the harness, and ask the
    upstream for the harness's aliased model if it has one."""
    root = root_key(dialect, body, info)
    identity = resolve_identity(path_id, headers, root)
    session_id = identity.id
    live = await services.store.live_state(session_id)
    plan = plan_request(dialect, body, info, live.session, live.hidden, root)
    harness = _harness(services, info, live.session, headers.get(HARNESS_HEADER))
    upstream_body = plan.upstream_body
    target = await services.aliases.target(harness)
    if target is not None and upstream_body.get("model") != target:
        upstream_body = {**upstream_body, "model": target}
    if services.config.capture_tokens:
        upstream_body = dialect.request_token_fields(upstream_body)
    cwd = headers.get(CWD_HEADER) or (live.session.cwd if live.session else services.config.cwd)
    return Exchange(
        id=uuid.uuid4().hex,
        session_id=session_id,
        dialect=dialect,
        info=info,
        body=body,
        plan=plan,
        harness=harness,
        analysis=AnalysisContext(cwd=cwd),
        root=root,
        session=live.session,
        upstream_url=upstream_url,
        upstream_headers=services.upstream.headers(headers, model=True),
        upstream_body=upstream_body,
    )


def _harness(
    services: Services, info: RequestInfo, session: SessionRecord | None, override: str | None
) -> str:
    registry = services.firewall.registry
    if override:
        try:
            return registry.harness(override).name
        except UnknownHarnessError:
            pass
    if info.has_tools:
        return registry.detect(info.tool_names).name
    return session.harness if session is not None and session.harness else FALLBACK_HARNESS


def enforcing_stop(services: Services, ex: Exchange) -> bool:
    """The session was stopped and the ``stop`` strategy keeps its main line from going on."""
    config = services.config
    return (
        ex.session is not None
        and ex.session.stopped
        and config.mode == "enforce"
        and config.strategy == "stop"
        and ex.plan.kind == "main"
    )
