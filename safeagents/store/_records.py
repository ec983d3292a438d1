"""What the store keeps: sessions, turns, findings, hidden history entries, outcomes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any, Literal

from safeagents.rules import HACK_ACTIONS, Finding

__all__ = [
    "HACK_ACTIONS",
    "FindingRecord",
    "HiddenEntry",
    "LiveState",
    "SessionRecord",
    "SessionUpdate",
    "TokenRecord",
    "TurnKind",
    "TurnRecord",
    "TurnStatus",
]

JSONObject = dict[str, Any]
TurnKind = Literal["main", "side", "reask"]
TurnStatus = Literal["ok", "aborted", "error"]
HiddenKind = Literal["pair", "restore"]


@dataclass(frozen=True, slots=True)
class FindingRecord(Finding):
    """A finding as stored: the engine's :class:`Finding` plus whether it blocked the call
    and whether it was revealed later (found on a call that already ran, by what a later
    request showed: a session holds one such finding per rule, call and summary, whichever
    instance revealed it first)."""

    blocked: bool = False
    revealed: bool = False

    @classmethod
    def from_finding(
        cls, finding: Finding, *, blocked: bool, revealed: bool = False
    ) -> FindingRecord:
        stored = {name: getattr(finding, name) for name in _STORED_FIELDS}
        return cls(**stored, blocked=blocked, revealed=revealed)

    def to_detail(self) -> JSONObject:
        return {**self.to_json(), "message": self.message, "blocked": self.blocked}


_STORED_FIELDS = tuple(f.name for f in dataclass_fields(Finding) if f.name != "effect")


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """The engine's token ids and logprobs for one upstream answer (never re-tokenised)."""

    prompt_token_ids: tuple[int, ...]
    completion_token_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    sampling: JSONObject | None = None
    """The sampling parameters the proxy enforced on this turn's request (a training
    session's); ``None`` when the harness's own were used."""

    def to_json(self) -> JSONObject:
        data: JSONObject = {
            "prompt_token_ids": list(self.prompt_token_ids),
            "completion_token_ids": list(self.completion_token_ids),
            "logprobs": list(self.logprobs),
        }
        if self.sampling is not None:
            data["sampling"] = dict(self.sampling)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TokenRecord:
        sampling = data.get("sampling")
        return cls(
            prompt_token_ids=tuple(int(t) for t in data.get("prompt_token_ids") or ()),
            completion_token_ids=tuple(int(t) for t in data.get("completion_token_ids") or ()),
            logprobs=tuple(float(p) for p in data.get("logprobs") or ()),
            sampling=dict(sampling) if isinstance(sampling, Mapping) else None,
        )


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One exchange with the upstream: the request it saw, its answer, what the harness got.

    ``kind`` is ``main`` or ``side`` for the harness's own request and ``reask`` for the
    requests the proxy made after withholding calls. ``delivered`` is the answer the harness
    received (``None`` when this attempt was withheld). ``seq`` is assigned by the store.
    ``model`` is the model that served the turn (the upstream's answer says, else the request
    sent); ``requested_model`` the one the harness asked for (they differ under an alias).
    """

    session_id: str
    exchange: str
    attempt: int
    kind: TurnKind
    status: TurnStatus
    dialect: str
    harness: str
    model: str
    stream: bool
    request: JSONObject | None
    response: JSONObject | None
    delivered: JSONObject | None = None
    findings: tuple[FindingRecord, ...] = ()
    usage: JSONObject | None = None
    tokens: TokenRecord | None = None
    error: str | None = None
    started: float = 0.0
    ended: float = 0.0
    seq: int = 0
    requested_model: str = ""
    request_json: str | None = field(default=None, repr=False, compare=False)
    """``request`` as JSON text when the caller has it already (the store keeps it as is)."""

    @property
    def duration(self) -> float:
        return max(0.0, self.ended - self.started)

    def to_json(self) -> JSONObject:
        return {
            "seq": self.seq,
            "exchange": self.exchange,
            "attempt": self.attempt,
            "kind": self.kind,
            "status": self.status,
            "dialect": self.dialect,
            "harness": self.harness,
            "model": self.model,
            "requested_model": self.requested_model,
            "stream": self.stream,
            "started": self.started,
            "ended": self.ended,
            "duration": round(self.duration, 6),
            "usage": self.usage,
            "error": self.error,
            "findings": [finding.to_detail() for finding in self.findings],
            "request": self.request,
            "response": self.response,
            "delivered": self.delivered,
            "tokens": self.tokens.to_json() if self.tokens is not None else None,
        }


@dataclass(frozen=True, slots=True)
class HiddenEntry:
    """History the harness never saw, restored into later requests of the session.

    ``pair`` entries insert ``items`` (a withheld assistant turn and its rejection results)
    at position ``at`` of the harness's conversation; ``restore`` entries put back the
    original call ``call_id`` (``items[0]``) that the rewrite strategy replaced. Both apply
    only to a request whose first ``at`` conversation items hash to ``anchor``.
    """

    dialect: str
    kind: HiddenKind
    at: int
    anchor: str
    items: tuple[JSONObject, ...]
    call_id: str = ""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A session's score and bookkeeping; ``outcome`` ``None`` means "not scored"."""

    id: str
    harness: str
    dialect: str = ""
    cwd: str = "/workspace"
    model: str = ""
    created: float = 0.0
    updated: float = 0.0
    hacked: bool = False
    tool_calls: int = 0
    turns: int = 0
    stopped: bool = False
    root_key: str = ""
    main_count: int = -1
    main_key: str = ""
    outcome: JSONObject | None = None
    findings: tuple[FindingRecord, ...] = ()
    sampling: JSONObject | None = None
    """A training session's sampling parameters, which the proxy enforces on its requests."""

    @property
    def scored(self) -> bool:
        return self.outcome is not None

    @property
    def unanalysable_calls(self) -> int:
        """Calls withheld because they could not be checked (of the findings read)."""
        return len({f.tool_call_id for f in self.findings if f.unanalysable})

    def report_json(self) -> JSONObject:
        """The ``safeagents check --format json`` session shape."""
        return {
            "id": self.id,
            "harness": self.harness,
            "hacked": self.hacked,
            "tool_calls": self.tool_calls,
            "unanalysable_calls": self.unanalysable_calls,
            "findings": [finding.to_json() for finding in self.findings],
        }

    def to_json(self) -> JSONObject:
        return {
            **self.report_json(),
            "dialect": self.dialect,
            "cwd": self.cwd,
            "model": self.model,
            "created": self.created,
            "updated": self.updated,
            "turn_count": self.turns,
            "stopped": self.stopped,
            "scored": self.scored,
            "outcome": self.outcome,
            "sampling": self.sampling,
        }


@dataclass(frozen=True, slots=True)
class SessionUpdate:
    """What one exchange changes in its session (applied atomically with its turns)."""

    session_id: str
    harness: str
    dialect: str
    cwd: str
    model: str
    root_key: str
    tool_calls: int = 0
    hacked: bool = False
    stopped: bool = False
    main: tuple[int, str] | None = None
    """The main line this exchange leaves (message count and the key of that prefix)."""
    read_main: tuple[int, str] | None = None
    """The session's main line when the request was read (``(-1, "")`` for a new session;
    ``None``: replace it unconditionally). ``main`` replaces the stored main line only if
    nobody moved it since (it is still ``read_main``) or ``main`` is at least as long, so a
    slower concurrent turn of the session never takes it back to a shorter conversation."""


@dataclass(frozen=True, slots=True)
class LiveState:
    """What the proxy needs before forwarding a request: the session and its hidden history."""

    session: SessionRecord | None
    hidden: tuple[HiddenEntry, ...] = field(default=())
    aliases_version: int = 0
    """Changes whenever any process sharing the store changes the model aliases; compared
    for equality only, with values from the same :class:`Store` object."""

    @classmethod
    def empty(cls, aliases_version: int = 0) -> LiveState:
        return cls(None, (), aliases_version)
