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
from safeagents.protocols import Dialect, RequestInfo
from safeagents.proxy._exchange import Attempt, Decision, Exchange
from safeagents.proxy._identity import resolve_identity, root_key
from safeagents.proxy._services import Services
from safeagents.proxy._sessions import plan_request
from safeagents.store import SessionRecord

__all__ = [
    "CWD_HEADER",
    "HARNESS_HEADER",
    "answer_stopped",
    "enforcing_stop",
    "prepare_exchange",
]

CWD_HEADER = "x-safeagents-cwd"
HARNESS_HEADER = "x-safeagents-harness"
STOPPED_TEXT = "safeagents stopped this run after a blocked tool call; it cannot continue."


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
    root = root_key(dialect.name, body, info)
    identity = resolve_identity(path_id, headers, root)
    live = await services.store.live_state(identity.id)
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
        session_id=identity.id,
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


async def answer_stopped(services: Services, ex: Exchange) -> dict[str, Any]:
    """Record and return the stop answer a stopped run gets without reaching the upstream."""
    delivered = ex.dialect.text_response(ex.info, STOPPED_TEXT)
    attempt = Attempt(kind=ex.plan.kind, request=ex.upstream_body)
    attempt.finish(None)
    attempt.delivered = delivered
    await services.recorder.record(
        ex, Decision(delivered=delivered, attempts=[attempt], stopped=True)
    )
    return delivered
