"""A request in its session: main line or side call, and the hidden history spliced back in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from safeagents.protocols import Dialect, RequestInfo
from safeagents.store import HiddenEntry, SessionRecord

__all__ = ["RequestPlan", "plan_request", "splice_hidden"]

JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RequestPlan:
    """How to forward one harness request.

    ``at``/``anchor`` locate the end of the harness's conversation: hidden entries created
    by this request are inserted there in later requests whose prefix hashes to ``anchor``.
    """

    kind: Literal["main", "side"]
    upstream_body: JSONObject
    at: int
    anchor: str
    main: tuple[int, str] | None
    spliced: int


def _extends(info: RequestInfo, count: int, key: str) -> bool:
    return 0 <= count <= info.message_count and info.conversation_key(count) == key


def classify(
    info: RequestInfo,
    body: Mapping[str, Any],
    session: SessionRecord | None,
    root: str,
    *,
    text_mode: bool = False,
) -> Literal["main", "side"]:
    """Main: offers tools (or comes from a harness in text mode, which offers none) and
    continues the session's main line (or restarts it from the same root after compaction).
    Side: titles, summaries, sub-agents, anything else without tools."""
    if (not info.has_tools and not text_mode) or body.get("tool_choice") == "none":
        return "side"
    if session is None or session.main_count < 0:
        return "main"
    if _extends(info, session.main_count, session.main_key):
        return "main"
    return "main" if root == session.root_key else "side"


def splice_hidden(
    dialect: Dialect,
    body: Mapping[str, Any],
    info: RequestInfo,
    hidden: Sequence[HiddenEntry],
) -> tuple[JSONObject, int]:
    """``body`` with every hidden entry whose anchor it extends put back; and how many were."""
    applicable = [
        entry
        for entry in hidden
        if entry.dialect == dialect.name and _extends(info, entry.at, entry.anchor)
    ]
    if not applicable:
        return dict(body), 0
    result: JSONObject = dict(body)
    restores = [entry for entry in applicable if entry.kind == "restore"]
    for entry in restores:
        result = dialect.restore_calls(result, entry.at, {entry.call_id: entry.items[0]})
    by_position: dict[int, list[JSONObject]] = {}
    for entry in applicable:
        if entry.kind == "pair":
            by_position.setdefault(entry.at, []).extend(entry.items)
    for position in sorted(by_position, reverse=True):
        result = dialect.splice(result, position, by_position[position])
    return result, len(applicable)


def plan_request(
    dialect: Dialect,
    body: Mapping[str, Any],
    info: RequestInfo,
    session: SessionRecord | None,
    hidden: Sequence[HiddenEntry],
    root: str,
    *,
    text_mode: bool = False,
) -> RequestPlan:
    kind = classify(info, body, session, root, text_mode=text_mode)
    upstream_body, spliced = splice_hidden(dialect, body, info, hidden)
    anchor = info.conversation_key(info.message_count)
    return RequestPlan(
        kind=kind,
        upstream_body=upstream_body,
        at=info.message_count,
        anchor=anchor,
        main=(info.message_count, anchor) if kind == "main" else None,
        spliced=spliced,
    )
