"""The sessions list's query string, read strictly: a bad value is a 400, never a guess."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

from safeagents.store import OUTCOMES, OutcomeFilter, SessionQuery

__all__ = ["PAGE_SIZE", "FilterError", "ListRequest", "parse_list"]

PAGE_SIZE = 50
_MAX_PAGE = 1_000_000
_WHOLE = re.compile(r"[0-9]{1,7}")
_KNOWN = frozenset({"hacked", "harness", "rule", "outcome", "since", "until", "q", "page"})
_HACKED = {"yes": True, "no": False}


class FilterError(ValueError):
    """A query-string value the console does not understand (answered with 400)."""


@dataclass(frozen=True, slots=True)
class ListRequest:
    """A page of the sessions list: the store query and the filters as the user wrote them."""

    query: SessionQuery
    page: int
    params: Mapping[str, str]

    @property
    def offset(self) -> int:
        return (self.page - 1) * PAGE_SIZE

    def link(self, **changes: str | int | None) -> str:
        """This list's query string with ``changes`` (``None`` drops a parameter)."""
        params: dict[str, str] = dict(self.params)
        for name, value in changes.items():
            if value is None:
                params.pop(name, None)
            else:
                params[name] = str(value)
        return "?" + urlencode(params) if params else "?"


def _time(name: str, value: str) -> float:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise FilterError(
            f"{name}={value!r}: use an ISO 8601 date or time, e.g. 2026-01-31 or "
            "2026-01-31T12:00 (UTC unless it says otherwise)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _text(name: str, value: str) -> str:
    if len(value) > 256 or any(ord(char) < 32 for char in value):
        raise FilterError(f"{name}: at most 256 printable characters")
    return value


def parse_list(params: Mapping[str, str]) -> ListRequest:
    """The list request ``params`` (a query string) asks for; :class:`FilterError` if bad."""
    unknown = sorted(set(params) - _KNOWN)
    if unknown:
        raise FilterError(
            f"unknown filter(s) {', '.join(unknown)}; known: {', '.join(sorted(_KNOWN))}"
        )
    given = {name: value.strip() for name, value in params.items() if value.strip()}
    hacked = given.get("hacked")
    if hacked is not None and hacked not in _HACKED:
        raise FilterError(f"hacked={hacked!r}: use yes or no")
    outcome = given.get("outcome")
    if outcome is not None and outcome not in OUTCOMES:
        raise FilterError(f"outcome={outcome!r}: use one of {', '.join(OUTCOMES)}")
    page_text = given.get("page", "1")
    if not _WHOLE.fullmatch(page_text) or not 1 <= int(page_text) <= _MAX_PAGE:
        raise FilterError(f"page={page_text!r}: a whole number from 1")
    query = SessionQuery(
        hacked=_HACKED[hacked] if hacked is not None else None,
        harness=_text("harness", given["harness"]) if "harness" in given else None,
        rule=_text("rule", given["rule"]) if "rule" in given else None,
        outcome=_outcome(outcome),
        since=_time("since", given["since"]) if "since" in given else None,
        until=_time("until", given["until"]) if "until" in given else None,
        id_prefix=_text("q", given["q"]) if "q" in given else None,
    )
    kept = {name: value for name, value in given.items() if name != "page"}
    return ListRequest(query, int(page_text), kept)


def _outcome(value: str | None) -> OutcomeFilter | None:
    for known in OUTCOMES:
        if value == known:
            return known
    return None
