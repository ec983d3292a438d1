"""One harness request on its way through the proxy, and the attempts made to answer it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from safeagents._actions import AnalysisContext
from safeagents._harness import Harness
from safeagents.exchange._sessions import RequestPlan
from safeagents.exchange._upstream import UpstreamError
from safeagents.protocols import ChatBridge, Dialect, RequestInfo, Sampling, json_bytes
from safeagents.store import FindingRecord, HiddenEntry, SessionRecord, TurnKind, TurnStatus

__all__ = ["Attempt", "Decision", "Exchange", "ExchangeFailed"]

JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Exchange:
    """Everything known about a harness request before the upstream answers."""

    id: str
    session_id: str
    dialect: Dialect
    info: RequestInfo
    body: JSONObject
    """The request as the harness sent it."""
    plan: RequestPlan
    harness: str
    analysis: AnalysisContext
    root: str
    session: SessionRecord | None
    upstream_url: str
    upstream_headers: dict[str, str]
    upstream_body: JSONObject
    started: float = field(default_factory=time.time)
    upstream_json: bytes | None = None
    """``upstream_body`` encoded once, for the upstream and the store: the harness's own
    bytes when nothing was spliced or replaced (see :meth:`encoded`)."""
    bridge: ChatBridge | None = None
    """Set when the upstream is asked in Chat Completions (see :meth:`wire`)."""
    sampling: Sampling | None = None
    """The training session's sampling parameters, enforced on every upstream request."""
    capture: bool = False
    """The upstream is asked for token ids and logprobs."""
    text_mode: Harness | None = None
    """The harness that may run an action written in a reply (see ``_text_mode``)."""

    @property
    def upstream_payload(self) -> bytes:
        """The body of the request to the upstream."""
        if self.bridge is not None:
            return json_bytes(self.wire(self.upstream_body))
        if self.upstream_json is not None:
            return self.upstream_json
        return json_bytes(self.upstream_body)

    def wire(self, body: JSONObject) -> JSONObject:
        """What is sent upstream for ``body`` (an upstream request in the harness's dialect):
        its Chat Completions translation when bridged, else ``body`` itself."""
        if self.bridge is None:
            return body
        return self.bridge.request(body, sampling=self.sampling, capture=self.capture)

    def answer(self, response: JSONObject, body: JSONObject) -> JSONObject:
        """The upstream's answer to :meth:`wire` ``(body)`` in the harness's dialect."""
        return response if self.bridge is None else self.bridge.response(response, body)

    @property
    def upstream_text(self) -> str | None:
        """``upstream_json`` as text, if it is UTF-8 (what the store keeps as the request)."""
        if self.upstream_json is None:
            return None
        try:
            return self.upstream_json.decode()
        except UnicodeDecodeError:
            return None

    def encoded(self, raw: bytes) -> Exchange:
        """This exchange with its upstream body encoded: ``raw`` (the harness's request bytes)
        if that body equals the harness's, else a fresh encoding."""
        same = raw.startswith(b"{") and self.upstream_body == self.body
        return replace(self, upstream_json=raw if same else json_bytes(self.upstream_body))

    @property
    def stream(self) -> bool:
        return self.info.stream


@dataclass(slots=True)
class Attempt:
    """One request to the upstream (the harness's own, or a re-ask) and its answer."""

    kind: TurnKind
    request: JSONObject
    started: float = field(default_factory=time.time)
    ended: float = 0.0
    response: JSONObject | None = None
    delivered: JSONObject | None = None
    findings: list[FindingRecord] = field(default_factory=list)
    calls: int = 0
    """Tool calls of ``response`` the engine checked."""
    status: TurnStatus = "ok"
    error: str | None = None
    recorded: bool = False
    """In the store already: a blocked answer is written before its re-ask is sent."""

    def finish(self, response: JSONObject | None) -> None:
        self.response = response
        self.ended = time.time()

    def fail(self, status: TurnStatus, error: str) -> None:
        self.status = status
        self.error = error
        self.ended = time.time()


@dataclass(slots=True)
class Decision:
    """What the harness receives, and everything that led to it."""

    delivered: JSONObject
    attempts: list[Attempt]
    hidden: list[HiddenEntry] = field(default_factory=list)
    tool_calls: int = 0
    hacked: bool = False
    stopped: bool = False
    blocked: int = 0
    reasks: int = 0
    unchanged: bool = False
    """``delivered`` is the first upstream answer as it came."""


class ExchangeFailed(Exception):
    """The upstream failed during a re-ask; the harness gets ``error`` and nothing is kept."""

    def __init__(self, error: UpstreamError, attempts: list[Attempt]) -> None:
        super().__init__(error.message)
        self.error = error
        self.attempts = attempts
