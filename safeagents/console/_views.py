"""The console's pages: the sessions list and its live feed, a session's transcript, the rules
and the model aliases. Each handler gets the caller's :class:`Access` already checked."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

from jinja2 import Environment
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse

from safeagents.console._context import ConsoleSource
from safeagents.console._events import session_events
from safeagents.console._filters import PAGE_SIZE, FilterError, ListRequest, parse_list
from safeagents.console._rules import rule_page, rules_page
from safeagents.console._transcript import transcript
from safeagents.exchange import Access
from safeagents.store import SessionRecord, SessionTotals

__all__ = ["aliases", "error_page", "events", "explain", "rule", "rules", "session", "sessions"]


def _page(
    env: Environment, request: Request, name: str, status: int = 200, **values: Any
) -> HTMLResponse:
    root = request.scope.get("root_path", "")
    html = env.get_template(name).render(root=root, request=request, **values)
    # a lone surrogate a model sent (JSON's \ud800) shows as that escape: UTF-8 has no such char
    return HTMLResponse(html.encode("utf-8", "backslashreplace"), status_code=status)


def error_page(env: Environment, request: Request, status: int, message: str) -> HTMLResponse:
    titles = {400: "Bad request", 401: "Token needed", 403: "Not yours", 404: "Not found"}
    return _page(
        env, request, "error.html", status, title=titles.get(status, "Error"), message=message
    )


def _totals(totals: SessionTotals) -> dict[str, int]:
    return asdict(totals)


def _listed(request: Request, access: Access) -> ListRequest:
    """The list's filters, confined to its own session for a session key; :class:`FilterError`
    for a value the console does not understand."""
    listed = parse_list(request.query_params)
    if access.kind == "session":
        return replace(listed, query=replace(listed.query, id=access.session))
    return listed


async def sessions(
    env: Environment, source: ConsoleSource, request: Request, access: Access
) -> Response:
    try:
        listed = _listed(request, access)
    except FilterError as problem:
        return error_page(env, request, 400, str(problem))
    query = listed.query
    store = source.store
    found = await store.query_sessions(query, limit=PAGE_SIZE + 1, offset=listed.offset)
    totals = await store.session_totals(query)
    rules = sorted(rule.id for rule in source.firewall.rules.rules)
    harnesses = sorted(source.firewall.registry.harnesses)
    return _page(
        env,
        request,
        "sessions.html",
        title="Sessions",
        listed=listed,
        sessions=found[:PAGE_SIZE],
        more=len(found) > PAGE_SIZE,
        totals=_totals(totals),
        rules=rules,
        harnesses=harnesses,
        live=listed.page == 1,
    )


async def events(
    env: Environment, source: ConsoleSource, request: Request, access: Access
) -> Response:
    try:
        query = _listed(request, access).query
    except FilterError as problem:
        return error_page(env, request, 400, str(problem))
    row = env.get_template("_row.html")
    root = request.scope.get("root_path", "")

    def render(session: SessionRecord) -> str:
        return row.render(root=root, session=session)

    stream = session_events(request, source.store, query, render, _totals)
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream, media_type="text/event-stream", headers=headers)


async def session(
    env: Environment, source: ConsoleSource, request: Request, access: Access
) -> Response:
    session_id = str(request.path_params["session_id"])
    if access.kind == "session" and session_id != access.session:
        return error_page(env, request, 403, "a session key only shows its own session")
    record = await source.store.get_session(session_id)
    if record is None:
        return error_page(env, request, 404, f"no session {session_id!r} in this store")
    turns = await source.store.turns(session_id)
    views = transcript(source.firewall.registry, record, turns)
    known = {rule.id for rule in source.firewall.rules.rules}
    return _page(
        env,
        request,
        "session.html",
        title=f"Session {record.id}",
        session=record,
        turns=views,
        known_rules=known,
    )


async def rules(
    env: Environment, source: ConsoleSource, request: Request, access: Access
) -> Response:
    return _page(env, request, "rules.html", title="Rules", **await rules_page(source))


async def rule(
    env: Environment, source: ConsoleSource, request: Request, access: Access
) -> Response:
    rule_id = str(request.path_params["rule_id"])
    values = await rule_page(source, rule_id)
    if values is None:
        return error_page(env, request, 404, f"no rule {rule_id!r} is loaded")
    return _page(env, request, "rule.html", title=f"Rule {rule_id}", **values)


async def explain(
    env: Environment, source: ConsoleSource, request: Request, access: Access
) -> Response:
    rule_id = request.query_params.get("rule", "").strip()
    if not rule_id:
        return _page(env, request, "explain.html", title="Explain a rule", rule_id="")
    if rule_id not in {rule.id for rule in source.firewall.rules.rules}:
        return error_page(env, request, 404, f"no rule {rule_id!r} is loaded")
    root = request.scope.get("root_path", "")
    return RedirectResponse(f"{root}/rules/{rule_id}", status_code=303)


async def aliases(
    env: Environment, source: ConsoleSource, request: Request, access: Access
) -> Response:
    current = await source.store.aliases()
    harnesses = sorted(source.firewall.registry.harnesses)
    served = await source.store.served_models()
    return _page(
        env,
        request,
        "aliases.html",
        title="Model aliases",
        aliases=current,
        harnesses=harnesses,
        served=served,
    )
