"""One harness request on its way through the proxy, and the attempts made to answer it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from safeagents._actions import AnalysisContext
from safeagents.protocols import Dialect, RequestInfo
from safeagents.proxy._sessions import RequestPlan
from safeagents.proxy._upstream import UpstreamError
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
