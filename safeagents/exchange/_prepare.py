"""A parsed model request becomes an :class:`Exchange`: shared by ``serve`` and ``intercept``.

Nothing here knows the web framework: headers are any case-insensitive (or lower-cased)
mapping, and the upstream URL is worked out by the front end.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from safeagents._actions import AnalysisContext
from safeagents._registry import FALLBACK_HARNESS, UnknownHarnessError
from safeagents._session_text import stated_cwd
from safeagents.exchange._exchange import Exchange
from safeagents.exchange._identity import resolve_identity, root_key
from safeagents.exchange._services import Services
from safeagents.exchange._sessions import plan_request
from safeagents.exchange._text_mode import text_harness
from safeagents.protocols import (
    CHAT,
    ChatBridge,
    Dialect,
    RequestInfo,
    Sampling,
    SamplingError,
    chat_bridge,
    model_path,
)
from safeagents.store import SessionRecord

__all__ = [
    "CWD_HEADER",
    "HARNESS_HEADER",
    "bridge_for",
    "enforcing_stop",
    "prepare_exchange",
    "upstream_path",
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
    harness = _harness(services, info, live.session, headers.get(HARNESS_HEADER))
    text_mode = text_harness(services.firewall.registry, dialect, info, harness)
    known = text_mode is not None and text_mode.name == harness  # not a guess for a stranger
    plan = plan_request(dialect, body, info, live.session, live.hidden, root, text_mode=known)
    upstream_body = plan.upstream_body
    target = await services.aliases.target(harness, live.aliases_version)
    if target is not None and upstream_body.get("model") != target:
        upstream_body = {**upstream_body, "model": target}
    bridge = bridge_for(services, dialect)
    sampling = _sampling(live.session)
    if sampling is not None and bridge is None:
        if dialect.name == CHAT.name:
            upstream_body = sampling.apply_chat(upstream_body)
        else:  # not enforceable in this dialect: the turns say nothing was enforced
            sampling = None
    if services.config.capture_tokens and bridge is None:
        upstream_body = dialect.request_token_fields(upstream_body)
    if headers.get(CWD_HEADER):
        cwd = headers[CWD_HEADER]
    elif live.session is not None:
        cwd = live.session.cwd
    else:  # a new session: where its harness says it runs, else where the operator said
        cwd = stated_cwd(_opening_texts(dialect, body)) or services.config.cwd
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
        bridge=bridge,
        sampling=sampling,
        capture=services.config.capture_tokens,
        text_mode=text_mode,
    )


def _opening_texts(dialect: Dialect, body: Mapping[str, Any]) -> Iterator[str]:
    """What the harness sent before the agent's first turn (its system prompt, the first user
    messages); nothing the agent wrote."""
    yield dialect.system_text(body)
    for item in dialect.conversation(body):
        text = dialect.user_text(item)
        if text is not None:
            yield text
        elif dialect.assistant_text(item) or next(dialect.history_events(item), None):
            return


def bridge_for(services: Services, dialect: Dialect) -> ChatBridge | None:
    """The translation to Chat Completions this proxy applies to ``dialect``'s requests."""
    return chat_bridge(dialect) if services.config.translates else None


def upstream_path(services: Services, dialect: Dialect) -> str:
    """The upstream endpoint ``dialect``'s requests go to (chat when translated)."""
    return model_path(CHAT if bridge_for(services, dialect) else dialect)


def _sampling(session: SessionRecord | None) -> Sampling | None:
    if session is None or session.sampling is None:
        return None
    try:
        return Sampling.from_json(session.sampling)
    except SamplingError:  # validated when set; a store edited by hand enforces nothing
        return None


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
