"""The trainer's admin calls survive the proxy dropping a keep-alive connection under them.

uvicorn closes a connection idle for its keep-alive time; a request the client writes at that
moment gets no response at all. The server below plays that moment deterministically: it
reads each request of its first ``drops`` connections and hangs up without answering.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from trainer._runner import ProxyAdmin

OK = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"


class _HangUp:
    """An HTTP/1.1 server that drops its first ``drops`` connections after reading a request,
    then answers ``{"key": "k"}``; ``requests`` holds every request line and body it read."""

    def __init__(self, drops: int) -> None:
        self.drops = drops
        self.requests: list[tuple[str, bytes]] = []

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        length = next(
            (
                int(line.split(":")[1])
                for line in head.split("\r\n")
                if line.lower().startswith("content-length:")
            ),
            0,
        )
        body = await reader.readexactly(length)
        self.requests.append((head.split("\r\n")[0], body))
        if len(self.requests) > self.drops:
            answer = json.dumps({"key": "k"}).encode()
            writer.write(OK % (len(answer), answer))
            await writer.drain()
        writer.close()
        await writer.wait_closed()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}/safeagents/v1"
        finally:
            server.close()
            await server.wait_closed()


async def _post(drops: int) -> tuple[_HangUp, BaseException | None]:
    server = _HangUp(drops)
    async with server.running() as url, httpx.AsyncClient(timeout=10.0) as client:
        try:
            await ProxyAdmin(url).post_outcome(client, "s-1", {"success": True})
        except (httpx.HTTPError, RuntimeError) as problem:
            return server, problem
    return server, None


def test_an_outcome_posted_as_the_server_hangs_up_is_sent_again() -> None:
    server, problem = asyncio.run(_post(drops=1))
    assert problem is None
    line = "POST /safeagents/v1/sessions/s-1/outcome HTTP/1.1"
    assert server.requests == [(line, b'{"success":true}')] * 2


def test_a_server_that_keeps_hanging_up_is_an_error_after_one_retry() -> None:
    server, problem = asyncio.run(_post(drops=5))
    assert isinstance(problem, httpx.RemoteProtocolError)
    assert len(server.requests) == 2


@pytest.mark.parametrize("drops", [0, 1])
def test_the_session_key_call_retries_alike(drops: int) -> None:
    async def calls() -> tuple[_HangUp, str]:
        server = _HangUp(drops)
        async with server.running() as url, httpx.AsyncClient(timeout=10.0) as client:
            admin = ProxyAdmin(url, token="t")
            key = await admin.session_key(client, "s-1")
        return server, key

    server, key = asyncio.run(calls())
    assert key == "k" and len(server.requests) == drops + 1
