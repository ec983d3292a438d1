"""The mitmproxy addon: requests to model APIs of any host get the rules of ``safeagents serve``.

Options (``--set safeagents_mode=monitor`` and so on) are declared in :meth:`InterceptAddon.load`;
re-asks reach the upstream directly, verified as mitmproxy verifies it (``ssl_insecure``,
``ssl_verify_upstream_trusted_ca``, ``ssl_verify_upstream_trusted_confdir``).
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Mapping, Sequence
from typing import Any

import certifi
from mitmproxy import ctx, exceptions, http
from mitmproxy.addonmanager import Loader
from mitmproxy.net.http.status_codes import RESPONSES

from safeagents._firewall import Firewall
from safeagents.exchange import (
    Exchange,
    Outcome,
    ProxyConfig,
    build_firewall,
    enforcing_stop,
)
from safeagents.intercept._engine import EngineThread
from safeagents.intercept._flows import (
    JSON_TYPE,
    SSE_TYPE,
    StreamFilter,
    TooLarge,
    abort_reason,
    error_body,
    intercept_request,
    model_dialect,
    parse_body,
    settle_buffered,
    too_large,
    unchecked_dialect,
)
from safeagents.protocols import Dialect
from safeagents.rules import RuleLoadError, parse_vars

__all__ = ["INTERCEPT_UPSTREAM", "InterceptAddon", "intercept_config"]

INTERCEPT_UPSTREAM = "https://intercepted.invalid"
"""The placeholder upstream of the intercept's config: every request names its own host."""
_KEY = "safeagents"
_OWN_PREFIX = "x-safeagents-"
_KEY_SLOTS = ("authorization", "x-api-key")
_OPTIONS = frozenset(
    {
        "safeagents_rules",
        "safeagents_vars",
        "safeagents_exclude_rules",
        "safeagents_store",
        "safeagents_mode",
        "safeagents_strategy",
        "safeagents_max_reasks",
        "safeagents_cwd",
        "safeagents_response_limit",
    }
)
_TLS_OPTIONS = frozenset(
    {"ssl_insecure", "ssl_verify_upstream_trusted_ca", "ssl_verify_upstream_trusted_confdir"}
)


def _vars(pairs: Sequence[str]) -> dict[str, str]:
    try:
        return parse_vars(pairs)
    except ValueError as problem:
        raise ValueError(f"safeagents_vars {problem}") from None


def intercept_config(options: Any) -> ProxyConfig:
    """The proxy configuration that mitmproxy's ``options`` describe."""
    return ProxyConfig(
        upstream=INTERCEPT_UPSTREAM,
        rules=tuple(options.safeagents_rules),
        exclude_rules=tuple(options.safeagents_exclude_rules),
        vars=_vars(options.safeagents_vars),
        store=options.safeagents_store,
        mode=options.safeagents_mode,
        strategy=options.safeagents_strategy,
        max_reasks=options.safeagents_max_reasks,
        cwd=options.safeagents_cwd,
        response_limit=options.safeagents_response_limit * 1024 * 1024,
    )


def upstream_tls(options: Any) -> ssl.SSLContext:
    """How re-asks verify the upstream: the same trust mitmproxy uses for its upstream leg."""
    context = ssl.create_default_context()
    if options.ssl_insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    ca_file: str | None = options.ssl_verify_upstream_trusted_ca
    ca_path: str | None = options.ssl_verify_upstream_trusted_confdir
    if ca_file is None and ca_path is None:
        ca_file = certifi.where()
    context.load_verify_locations(cafile=ca_file, capath=ca_path)
    return context


class InterceptAddon:
    """Checks every tool call in answers of chat, responses and messages endpoints."""

    def __init__(self, firewall: Firewall | None = None) -> None:
        self.engine: EngineThread | None = None
        self._loaded = firewall  # already loaded for the options it is first configured with

    def load(self, loader: Loader) -> None:
        loader.add_option(
            "safeagents_rules", Sequence[str], [], "Rule pack or file (default: bundled packs)."
        )
        loader.add_option("safeagents_vars", Sequence[str], [], "Rule variable, as KEY=VALUE.")
        loader.add_option(
            "safeagents_exclude_rules", Sequence[str], [], "Ids of rules to leave out."
        )
        loader.add_option("safeagents_store", str, "safeagents.db", "SQLite file of sessions.")
        loader.add_option(
            "safeagents_mode",
            str,
            "enforce",
            "enforce: withhold blocked calls; monitor: change nothing, record findings.",
            choices=("enforce", "monitor"),
        )
        loader.add_option(
            "safeagents_strategy",
            str,
            "reask",
            "What a blocked call leads to.",
            choices=("reask", "rewrite", "stop"),
        )
        loader.add_option("safeagents_max_reasks", int, 3, "Re-asks before giving up.")
        loader.add_option("safeagents_cwd", str, "/workspace", "The agent's working directory.")
        loader.add_option(
            "safeagents_response_limit",
            int,
            32,
            "Largest model answer read, in MiB; beyond it the harness gets a 502.",
        )

    def configure(self, updated: set[str]) -> None:
        relevant = _OPTIONS if self.engine is None else _OPTIONS | _TLS_OPTIONS
        if updated & relevant:
            self._rebuild()

    def running(self) -> None:
        if self.engine is None:
            self._rebuild()

    def done(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    def _rebuild(self) -> None:
        try:
            config = intercept_config(ctx.options)
            firewall = self._loaded or build_firewall(config)
            self._loaded = None
        except (RuleLoadError, ValueError) as error:
            raise exceptions.OptionsError(str(error)) from None
        previous = self.engine
        self.engine = EngineThread(config, firewall, ssl_context=upstream_tls(ctx.options))
        if previous is not None:
            previous.close()

    async def request(self, flow: http.HTTPFlow) -> None:
        engine = self.engine
        request = flow.request
        dialect = model_dialect(request.method, request.path)
        if engine is None or flow.response is not None:
            return
        if dialect is None:
            refused = unchecked_dialect(request.method, request.path)
            if refused is not None:
                message = f"safeagents does not check {request.method} {request.path}"
                self._refuse(flow, refused, 404, message, "unchecked_endpoint")
            return
        raw = request.get_content(strict=False) or b""
        limit = engine.config.body_limit
        if len(raw) > limit:
            self._refuse(flow, dialect, 413, f"request body exceeds {limit} bytes", "too_large")
            return
        try:
            body = parse_body(dialect, raw)
        except ValueError as error:
            self._refuse(flow, dialect, 400, str(error), "bad_body")
            return
        headers = {key.lower(): value for key, value in request.headers.items()}
        path, url = request.path, request.url
        state = await engine.run(
            lambda services: intercept_request(
                services, dialect, body, path=path, headers=headers, url=url
            )
        )
        credentials = engine.services.credentials  # the first leg's hygiene is the re-asks'
        for name in [
            name
            for name in request.headers
            if name.lower().startswith(_OWN_PREFIX)
            or (name.lower() in _KEY_SLOTS and credentials.is_credential(request.headers[name]))
        ]:
            del request.headers[name]
        ex = state.ex
        if enforcing_stop(engine.services, ex):
            delivered = await engine.run(lambda _: state.stopped())
            flow.response = _rendered(ex, delivered)
            return
        if ex.plan.spliced or ex.upstream_body.get("model") != body.get("model"):
            request.content = _encode(ex.upstream_body)  # hidden history, or a model alias
        if ex.stream:
            request.headers["accept-encoding"] = "identity"  # its SSE is read as it arrives
        flow.metadata[_KEY] = state

    def _refuse(
        self, flow: http.HTTPFlow, dialect: Dialect, status: int, message: str, kind: str
    ) -> None:
        """A request safeagents cannot read must not fetch an unchecked answer (enforce mode)."""
        if self.engine is not None and self.engine.config.mode == "enforce":
            body = _encode(dialect.error_body(status, message, kind=kind))
            flow.response = http.Response.make(status, body, {"content-type": JSON_TYPE})

    async def responseheaders(self, flow: http.HTTPFlow) -> None:
        state, engine, response = flow.metadata.get(_KEY), self.engine, flow.response
        if response is None:
            return
        headers = response.headers
        is_sse = SSE_TYPE in headers.get("content-type", "")
        if not isinstance(state, Outcome) or engine is None:
            if is_sse:
                response.stream = True  # other event streams (MCP over SSE…) flow as they come
            return
        if await self._too_large(state, engine, response):
            return
        if not state.ex.stream or response.status_code >= 400 or not is_sse:
            return
        if headers.get("content-encoding", "identity").strip().lower() not in ("", "identity"):
            return  # the response hook decodes and checks it whole
        if engine.config.mode == "enforce":
            headers.pop("content-length", None)
        config = engine.config
        wait_limit = config.timeout * (config.max_reasks + 1) + 30.0
        response.stream = StreamFilter(engine, state, wait_limit)

    async def _too_large(
        self, state: Outcome, engine: EngineThread, response: http.Response
    ) -> bool:
        """An answer announced past the response limit is not read into memory: in enforce
        mode the harness gets serve's 502, in monitor mode the bytes flow on; recorded."""
        length = response.headers.get("content-length", "")
        limit = engine.config.response_limit
        if not length.isdigit() or int(length) <= limit:
            return False
        error = too_large(limit)
        await engine.run(lambda _: state.upstream_failed(error))
        if engine.config.mode == "monitor":
            response.stream = True
            return True
        response.status_code = error.status
        response.reason = RESPONSES.get(error.status, "")
        for name in ("content-encoding", "content-length", "transfer-encoding"):
            response.headers.pop(name, None)
        response.headers["content-type"] = JSON_TYPE
        response.stream = TooLarge(error_body(state.ex, error))
        return True

    async def response(self, flow: http.HTTPFlow) -> None:
        state, engine, response = flow.metadata.get(_KEY), self.engine, flow.response
        if not isinstance(state, Outcome) or engine is None or response is None:
            return
        if state.claimed or response.stream:
            return  # a streamed answer was settled by its filter
        status, content = response.status_code, response.get_content(strict=False) or b""
        content_type = response.headers.get("content-type", "")
        replacement = await engine.run(
            lambda _: settle_buffered(state, status, content, content_type)
        )
        if replacement is None:
            return
        response.status_code = replacement.status
        response.reason = RESPONSES.get(replacement.status, "")
        for name in ("content-encoding", "content-length", "transfer-encoding"):
            response.headers.pop(name, None)
        response.headers["content-type"] = replacement.content_type
        response.content = replacement.body

    async def error(self, flow: http.HTTPFlow) -> None:
        state, engine = flow.metadata.get(_KEY), self.engine
        if not isinstance(state, Outcome) or engine is None or state.claimed:
            return
        message = flow.error.msg if flow.error is not None else "unknown error"
        status, reason = abort_reason(flow.response is not None, message)
        await engine.run(lambda _: state.fail(reason, status=status))


def _encode(value: Mapping[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _rendered(ex: Exchange, delivered: dict[str, Any]) -> http.Response:
    if ex.stream:
        body, content_type = ex.dialect.stream_events(delivered, ex.info), SSE_TYPE
    else:
        body, content_type = _encode(delivered), JSON_TYPE
    return http.Response.make(200, body, {"content-type": content_type})
