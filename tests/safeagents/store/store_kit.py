"""What the store tests share: the type of the ``open_backend`` fixture (conftest.py), and
records to store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from safeagents.store import SessionUpdate, Store, TurnRecord

__all__ = ["OpenBackend", "make_turn", "make_update"]

OpenBackend = Callable[[str], Store]
"""Opens the store called ``name`` on the test's backend; the same name again: another
process or instance on that store."""


def make_update(session_id: str, **changes: Any) -> SessionUpdate:
    """A pi session's update for one exchange with one tool call, with ``changes``."""
    fields: dict[str, object] = {
        "session_id": session_id,
        "harness": "pi",
        "dialect": "chat",
        "cwd": "/workspace",
        "model": "m",
        "root_key": "root",
        "tool_calls": 1,
    }
    fields.update(changes)
    return SessionUpdate(**fields)  # type: ignore[arg-type]


def make_turn(session_id: str, exchange: str = "e", **changes: Any) -> TurnRecord:
    """A pi chat turn answered without calls, with ``changes``."""
    fields: dict[str, object] = {
        "session_id": session_id,
        "exchange": exchange,
        "attempt": 0,
        "kind": "main",
        "status": "ok",
        "dialect": "chat",
        "harness": "pi",
        "model": "m",
        "stream": False,
        "request": {"messages": [{"role": "user", "content": exchange}]},
        "response": {"choices": []},
    }
    fields.update(changes)
    return TurnRecord(**fields)  # type: ignore[arg-type]
