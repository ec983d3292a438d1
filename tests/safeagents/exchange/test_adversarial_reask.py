"""A blocked answer is in the store before its re-ask is sent, and recorded only once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterable, Mapping
from typing import Any

import pytest
from proxy_testkit import BLOCKED, RULE, first_body

from safeagents import Firewall
from safeagents.exchange import (
    Outcome,
    ProxyConfig,
    Services,
    TransportResponse,
    build_firewall,
    prepare_exchange,
)
from safeagents.protocols import CHAT
from safeagents.store import SQLiteStore

BLOCKED_ANSWER = {
    "id": "a",
    "object": "chat.completion",
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": BLOCKED})},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
}


class Stalling:
    """A transport whose every request hangs (a slow re-ask)."""

    def __init__(self) -> None:
        self.sent = asyncio.Event()

    async def send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        content: bytes | AsyncIterable[bytes] | None,
    ) -> TransportResponse:
        self.sent.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        pass


@pytest.fixture(scope="module")
def firewall() -> Firewall:
    return build_firewall(ProxyConfig(upstream="http://127.0.0.1:1"))


def test_the_blocked_attempt_is_stored_before_the_reask_and_not_again(
    firewall: Firewall,
) -> None:
    async def scenario() -> None:
        config = ProxyConfig(upstream="http://127.0.0.1:1/v1")
        services = Services.build(config, firewall, SQLiteStore(":memory:"))
        stalling = Stalling()
        services.upstream.client = stalling
        body = first_body("chat")
        ex = await prepare_exchange(
            services,
            CHAT,
            body,
            CHAT.parse_request(body),
            path_id="durable",
            headers={},
            upstream_url="http://127.0.0.1:1/v1/chat/completions",
        )
        try:
            outcome = Outcome(services, ex)

            async def run() -> Any:
                async with outcome:
                    outcome.first.finish(BLOCKED_ANSWER)
                    return await outcome.settle()

            task = asyncio.create_task(run())
            await asyncio.wait_for(stalling.sent.wait(), 10)
            # the re-ask is on its way: the blocked answer is already committed
            session = await services.store.get_session("durable")
            assert session is not None and session.hacked and session.tool_calls == 1
            assert [finding.rule_id for finding in session.findings] == [RULE]

            task.cancel()  # the harness went away during the re-ask
            with pytest.raises(asyncio.CancelledError):
                await task
            await outcome.close()
            turns = await services.store.turns("durable")
            assert [(t.kind, t.attempt, t.status) for t in turns] == [
                ("main", 0, "ok"),
                ("reask", 1, "aborted"),
            ]
            assert [len(t.findings) for t in turns] == [1, 0]
            session = await services.store.get_session("durable")
            assert session is not None
            assert (session.tool_calls, session.turns, len(session.findings)) == (1, 2, 1)
        finally:
            await services.aclose()

    asyncio.run(scenario())
