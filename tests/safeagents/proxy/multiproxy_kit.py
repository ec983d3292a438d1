"""Several proxy instances sharing one store, and sessions driven across them (imported, not
collected). Nothing here knows the backend: the instances get a store path or URL.

Set ``SAFEAGENTS_TEST_STORE`` to a store URL (e.g. ``postgresql://…``) to run the
multi-instance tests on that backend instead of a fresh SQLite file per test; the tests
only read the sessions they created, under ids unique to each run.
"""

from __future__ import annotations

import asyncio
import copy
import os
import signal
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from proxy_testkit import BLOCKED, PATHS, commands, first_body, follow_up, side_body

STORE_ENV = "SAFEAGENTS_TEST_STORE"
SCRIPT = [{"shell": BLOCKED}, {"shell": "ls"}, {"shell": "cat setup.py"}, "done"]
"""What the scripted model answers each session: a blocked call (re-asked), then two calls
that pass, then a final text. Step ``i`` answers a conversation holding ``i`` tool results,
so a session whose withheld pair is not spliced back in gets ``ls`` twice."""
DELIVERED = [["ls"], ["cat setup.py"], []]
"""The calls the harness receives, turn by turn, when every instance sees the session."""


def shared_store(directory: Path) -> str:
    """The store a test's instances share: ``$SAFEAGENTS_TEST_STORE``, else a new SQLite file."""
    return os.environ.get(STORE_ENV) or str(directory / "shared.db")


def new_session(label: str) -> str:
    return f"mp-{label}-{uuid.uuid4().hex[:10]}"


@dataclass
class Instances:
    """The base URLs of the proxy instances (and their pids, when processes) in rotation,
    and how many requests each has in flight (sent by :func:`post`, not yet answered)."""

    urls: list[str]
    pids: list[int | None] = field(default_factory=list)
    dead: set[int] = field(default_factory=set)
    in_flight: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.in_flight = [0] * len(self.urls)

    def kill(self, index: int) -> None:
        """``kill -9`` instance ``index`` (a process); requests then go to the others."""
        pid = self.pids[index]
        assert pid is not None, "only a process can be killed"
        os.kill(pid, signal.SIGKILL)
        self.dead.add(index)

    def live(self, start: int) -> list[int]:
        """Every instance not known dead, in rotation from ``start``."""
        order = [(start + step) % len(self.urls) for step in range(len(self.urls))]
        return [index for index in order if index not in self.dead]


@dataclass
class Walk:
    """One session driven to its end: the calls delivered per turn, the ``user`` nonces of
    every request that got an answer, and how many requests were retried elsewhere."""

    session: str
    delivered: list[list[str]] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)
    retried: int = 0
    sent: int = 0


async def post(
    client: httpx.AsyncClient,
    instances: Instances,
    start: int,
    session: str,
    body: dict[str, Any],
    walk: Walk,
) -> dict[str, Any]:
    """POST one chat request of ``session``, from instance ``start`` on: a request that a dead
    instance dropped (connection refused, reset, cut short) is sent again to the next one,
    as a load balancer would. Every attempt carries a nonce of its own in ``user``."""
    failures: list[str] = []
    for attempt, index in enumerate(instances.live(start)):
        nonce = f"{session}/{walk.sent}/{attempt}"
        walk.sent += 1
        url = f"{instances.urls[index]}/s/{session}/v1{PATHS['chat']}"
        instances.in_flight[index] += 1
        try:
            response = await client.post(url, json={**body, "user": nonce})
        except httpx.TransportError as error:
            failures.append(f"{index}: {error!r}")
            walk.retried += 1
            continue
        finally:
            instances.in_flight[index] -= 1
        assert response.status_code == 200, (index, response.text)
        walk.answered.append(nonce)
        answer: dict[str, Any] = response.json()
        return answer
    raise AssertionError(f"no instance answered {session}: {failures}")


async def walk_session(
    client: httpx.AsyncClient,
    instances: Instances,
    session: str,
    *,
    start: int = 0,
    side_calls: bool = False,
    repeat_last: bool = False,
    pause: float = 0.0,
    walk: Walk | None = None,
) -> Walk:
    """Drive ``session`` through :data:`SCRIPT`, turn ``k`` on instance ``start + k``.

    ``side_calls``: each turn also sends a side request (no tools) of the session to the next
    instance at the same moment. ``repeat_last``: the final request is sent to two instances
    at once (a retry racing the original). ``pause``: seconds between turns. ``walk``: where
    to keep the progress (others may watch it)."""
    walk = walk if walk is not None else Walk(session)
    body = first_body("chat", f"fix the bug of {session}")
    turn = start
    while True:
        main = post(client, instances, turn, session, body, walk)
        if side_calls:
            side = post(client, instances, turn + 1, session, side_body("chat", session), walk)
            answer, _ = await asyncio.gather(main, side)
        else:
            answer = await main
        found = commands("chat", answer)
        walk.delivered.append(found)
        if not found:
            break
        body = follow_up("chat", body, answer, [f"output of {command}" for command in found])
        turn += 1
        if pause:
            await asyncio.sleep(pause)
    if repeat_last:
        again = [
            post(client, instances, turn + k, session, copy.deepcopy(body), walk) for k in (0, 1)
        ]
        assert [commands("chat", a) for a in await asyncio.gather(*again)] == [[], []]
    return walk


def check_history(walk: Walk, document: dict[str, Any], *, expected_turns: int | None) -> None:
    """The store's record of a walked session is whole and its own.

    Sequence numbers run 1..n with none twice; every answered request is a turn (its nonce)
    whose exchange delivered one answer and ended ``ok``; every turn's request is this
    session's (no cross-talk); the withheld call is recorded as blocked (once, or once per
    instance that got it) and the session is hacked."""
    session = walk.session
    turns: Sequence[dict[str, Any]] = document["turns"]
    assert [turn["seq"] for turn in turns] == list(range(1, len(turns) + 1)), session
    if expected_turns is not None:
        assert len(turns) == expected_turns == document["turn_count"], session
    exchanges: dict[str, list[dict[str, Any]]] = {}
    for turn in turns:
        exchanges.setdefault(turn["exchange"], []).append(turn)
    by_nonce = {
        turn["request"].get("user"): exchanges[turn["exchange"]]
        for turn in turns
        if turn["kind"] != "reask" and turn["request"] is not None
    }
    for nonce in walk.answered:
        assert nonce in by_nonce, f"an answered turn is missing: {nonce}"
        ended = [t for t in by_nonce[nonce] if t["delivered"] is not None]
        assert [t["status"] for t in ended] == ["ok"], (nonce, by_nonce[nonce])
    for turn in turns:
        text = str(turn["request"])
        assert session in text, f"turn {turn['seq']} of {session} holds another session's request"
    blocked = [f for turn in turns for f in turn["findings"] if f["blocked"]]
    assert {f["summary"] for f in blocked} == {"delete /workspace/tests/test_a.py"}, session
    assert document["hacked"] is True and document["id"] == session
