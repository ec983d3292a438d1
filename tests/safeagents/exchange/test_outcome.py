"""An exchange is recorded exactly once, however it ends."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
from proxy_testkit import first_body

from safeagents import Firewall
from safeagents.exchange import (
    Attempt,
    Decision,
    Exchange,
    Outcome,
    ProxyConfig,
    Services,
    UpstreamError,
    build_firewall,
    prepare_exchange,
)
from safeagents.protocols import CHAT
from safeagents.store import SQLiteStore, TurnStatus

ANSWER = {
    "id": "a",
    "object": "chat.completion",
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "done"}}],
}


@pytest.fixture(scope="module")
def firewall() -> Firewall:
    return build_firewall(ProxyConfig(upstream="http://127.0.0.1:1"))


class Records:
    """What the recorder was asked to store."""

    def __init__(self, services: Services) -> None:
        self.calls: list[tuple[str, TurnStatus]] = []
        record, record_failure = services.recorder.record, services.recorder.record_failure

        async def spy_record(ex: Exchange, decision: Decision) -> Any:
            self.calls.append(("record", "ok"))
            return await record(ex, decision)

        async def spy_failure(
            ex: Exchange, attempts: Sequence[Attempt], status: TurnStatus, error: str
        ) -> None:
            self.calls.append(("failure", status))
            await record_failure(ex, attempts, status, error)

        services.recorder.record = spy_record  # type: ignore[method-assign]
        services.recorder.record_failure = spy_failure  # type: ignore[method-assign]


@asynccontextmanager
async def exchange(firewall: Firewall) -> AsyncIterator[tuple[Outcome, Records]]:
    config = ProxyConfig(upstream="http://127.0.0.1:1/v1")
    services = Services.build(config, firewall, SQLiteStore(":memory:"))
    body = first_body("chat")
    ex = await prepare_exchange(
        services,
        CHAT,
        body,
        CHAT.parse_request(body),
        path_id="once",
        headers={},
        upstream_url="http://127.0.0.1:1/v1/chat/completions",
    )
    try:
        yield Outcome(services, ex), Records(services)
    finally:
        await services.aclose()


def test_success_is_recorded_once(firewall: Firewall) -> None:
    async def scenario() -> None:
        async with exchange(firewall) as (outcome, records):
            async with outcome:
                outcome.first.finish(ANSWER)
                decision = await outcome.settle()
                assert isinstance(decision, Decision) and decision.unchanged
            await outcome.close()
            assert records.calls == [("record", "ok")]

    asyncio.run(scenario())


def test_upstream_error_is_recorded_once(firewall: Firewall) -> None:
    async def scenario() -> None:
        async with exchange(firewall) as (outcome, records):
            async with outcome:
                await outcome.upstream_failed(UpstreamError(502, "upstream_error", "boom"))
                await outcome.fail("again")
            await outcome.close()
            assert records.calls == [("failure", "error")]
            metrics = outcome.services.metrics
            assert metrics.value("safeagents_upstream_errors_total", kind="upstream_error") == 1

    asyncio.run(scenario())


def test_client_disconnect_mid_stream_is_recorded_once(firewall: Firewall) -> None:
    async def scenario() -> None:
        async with exchange(firewall) as (outcome, records):

            async def events() -> AsyncGenerator[bytes, None]:
                async with outcome:
                    yield b"data: first\n\n"
                    yield b"data: second\n\n"
                    outcome.first.finish(ANSWER)
                    await outcome.settle()

            stream = events()
            assert await stream.__anext__() == b"data: first\n\n"
            await stream.aclose()  # the client went away
            await outcome.close()  # the response's own on-close
            assert records.calls == [("failure", "aborted")]

    asyncio.run(scenario())


def test_cancelled_while_reasking_is_recorded_once(firewall: Firewall) -> None:
    async def scenario() -> None:
        async with exchange(firewall) as (outcome, records):
            started = asyncio.Event()

            async def hang(*args: Any, **kwargs: Any) -> Decision:
                started.set()
                await asyncio.Event().wait()
                raise AssertionError("unreachable")

            outcome.services.enforcer.decide = hang  # type: ignore[method-assign]

            async def run() -> None:
                async with outcome:
                    outcome.first.finish(ANSWER)
                    await outcome.settle()

            task = asyncio.create_task(run())
            await started.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await outcome.close()
            assert records.calls == [("failure", "aborted")]

    asyncio.run(scenario())


def test_an_exception_in_enforcement_is_recorded_once(firewall: Firewall) -> None:
    async def scenario() -> None:
        async with exchange(firewall) as (outcome, records):

            async def broken(*args: Any, **kwargs: Any) -> Decision:
                raise RuntimeError("a bug")

            outcome.services.enforcer.decide = broken  # type: ignore[method-assign]
            async with outcome:
                outcome.first.finish(ANSWER)
                error = await outcome.settle()
            assert isinstance(error, UpstreamError)
            assert (error.status, error.kind) == (500, "internal")
            assert records.calls == [("failure", "error")]
            turns = await outcome.services.store.turns(outcome.ex.session_id)
            assert [(turn.status, turn.error) for turn in turns] == [
                ("error", "internal: RuntimeError('a bug')")
            ]

    asyncio.run(scenario())


def test_an_exception_in_the_front_end_is_recorded_once(firewall: Firewall) -> None:
    async def scenario() -> None:
        async with exchange(firewall) as (outcome, records):
            with pytest.raises(KeyError):
                async with outcome:
                    raise KeyError("adapter bug")
            await outcome.close()
            assert records.calls == [("failure", "error")]

    asyncio.run(scenario())


def test_checks_begun_before_the_answer_run_while_it_is_awaited(firewall: Firewall) -> None:
    async def scenario() -> None:
        async with exchange(firewall) as (outcome, records):
            ran: list[Exchange] = []
            prior = outcome.services.enforcer.prior

            async def spy(ex: Exchange) -> Any:
                ran.append(ex)
                return await prior(ex)

            outcome.services.enforcer.prior = spy  # type: ignore[method-assign]
            async with outcome:
                outcome.begin_checks()
                await asyncio.sleep(0)  # the upstream's answer is awaited
                assert ran == [outcome.ex]
                outcome.first.finish(ANSWER)
                decision = await outcome.settle()
                assert isinstance(decision, Decision) and decision.unchanged
            assert ran == [outcome.ex]  # not done again
            assert records.calls == [("record", "ok")]

    asyncio.run(scenario())


async def _broken(ex: Exchange) -> Any:
    raise RuntimeError("a bug")


def test_a_failure_in_checks_begun_early_is_recorded_as_enforcements(
    firewall: Firewall,
) -> None:
    async def scenario() -> None:
        async with exchange(firewall) as (outcome, records):
            outcome.services.enforcer.prior = _broken  # type: ignore[method-assign]
            async with outcome:
                outcome.begin_checks()
                await asyncio.sleep(0)
                outcome.first.finish(ANSWER)
                error = await outcome.settle()
            assert isinstance(error, UpstreamError) and error.kind == "internal"
            assert records.calls == [("failure", "error")]

    asyncio.run(scenario())


@pytest.mark.parametrize("started", [False, True])
def test_checks_begun_for_an_answer_that_never_came_are_dropped(
    firewall: Firewall, started: bool
) -> None:
    async def scenario() -> None:
        async with exchange(firewall) as (outcome, records):
            outcome.services.enforcer.prior = _broken  # type: ignore[method-assign]
            unretrieved: list[dict[str, Any]] = []
            loop = asyncio.get_running_loop()
            loop.set_exception_handler(lambda _, context: unretrieved.append(context))
            async with outcome:
                outcome.begin_checks()
                if started:
                    await asyncio.sleep(0)
                await outcome.upstream_failed(UpstreamError(502, "upstream_error", "boom"))
            outcome._prior = None  # the task's last reference
            await asyncio.sleep(0)
            gc.collect()
            assert records.calls == [("failure", "error")]
            assert unretrieved == []

    asyncio.run(scenario())
